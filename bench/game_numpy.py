"""bench/game_numpy.py: NumPy's side of bench/game.lua, alternated with it case
by case (bench/numpy_support.py). The data come from the same formulas as
bench/game.lua's; the names and calls a round match its own.
"""
import numpy as np

import numpy_support as ns

P = ns.params(N=100_000, SQUARE=1000, H=480, W=640)
N, SQUARE, H, W = P["N"], P["SQUARE"], P["H"], P["W"]
G, G2 = 0.6180339887498949, 0.7548776662466927


def spread(n, g):
    return (np.arange(n, dtype=np.float64) * g % 1.0).astype(np.float32)


pos = spread(N * 3, G).reshape(N, 3)
col = spread(N, G2).reshape(N, 1)
flags = col < 0.5
square = spread(SQUARE * SQUARE, G2).reshape(SQUARE, SQUARE)
img = spread(H * W, G).reshape(H, W)

ns.case("add_n3_n1", lambda: pos + col, reps=20)
ns.case("add_n3_n1_bool", lambda: pos + flags, reps=20)
ns.case("transpose_add_n3", lambda: pos.T + 1, reps=20)
ns.case("transpose_add_square", lambda: square.T + 1, reps=5)
ns.case("block_mean", lambda: img.reshape(H // 2, 2, W // 2, 2).mean(axis=(1, 3)), reps=20)

mask = spread(N, G2) < 0.005
M = spread(N * 3, G).reshape(N, 3)
v = spread(N, G)


def set_rows():
    M[mask] = 1.5


def set_zero():
    v[mask] = 0


ns.case("mask_set_rows", set_rows, reps=100)
ns.case("mask_set_zero", set_zero, reps=100)
ns.case("mask_nonzero", mask.nonzero, reps=100)
ns.serve()
