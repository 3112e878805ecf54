"""bench/vecmath_numpy.py: NumPy's side of bench/vecmath.lua, alternated with it
case by case (bench/numpy_support.py). The names, operands and calls a round
match bench/vecmath.lua's."""
import numpy as np

import numpy_support as ns

P = ns.params(ROWS=100000, MAT=256, POINTS=1000000, KNOTS=1000)


def emit(name, f, reps=1):
    ns.case(name, f, reps=reps, warmups=2)


def pattern(rows, cols):
    i = np.arange(rows).reshape(rows, 1)
    j = np.arange(cols).reshape(1, cols)
    return ((i * 7 + j * 3) % 11) / 11 - 0.5


a = pattern(P["ROWS"], 3)
b = np.ascontiguousarray(pattern(P["ROWS"], 3)[::-1])
m1 = pattern(P["MAT"], P["MAT"])
m2 = np.ascontiguousarray(pattern(P["MAT"], P["MAT"]).T)
xp = np.linspace(0, 1, P["KNOTS"]) ** 2
fp = np.sin(xp * 10)
x = (np.arange(P["POINTS"]) * 0.6180339887) % 1.0

emit("cross", lambda: np.cross(a, b))
emit("norm_dim2", lambda: np.linalg.norm(a, axis=1))
emit("einsum_bi_bi_b", lambda: np.einsum("bi,bi->b", a, b))
emit("einsum_ij_jk_ik", lambda: np.einsum("ij,jk->ik", m1, m2), 4)
emit("interp", lambda: np.interp(x, xp, fp))
ns.serve()
