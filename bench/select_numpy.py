"""bench/select_numpy.py: NumPy's side of bench/select.lua, in the same run.

Prints "name seconds" per figure (the median of ROUNDS rounds of CPU time);
the data come from the same formulas as bench/select.lua's. top-k is NumPy's
idiom for the k largest, sorted, with their indices: argpartition, then a sort
of the k.
"""
import sys
import time

import numpy as np

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N = 10_000_000
G, G2 = 0.6180339887498949, 0.7548776662466927

i = np.arange(N, dtype=np.float64)
x = (i * G % 1.0).astype(np.float32)
s = np.sort(x)
mask = x < 0.5
idx = ((i * G2 % 1.0) * N).astype(np.int64)
ints = ((i * G % 1.0) * 1000).astype(np.int64)
rows = x[:8000].reshape(8, 1000)
coarse = np.floor((i * G % 1.0) * 100000).astype(np.float32)
del i


def topk(a, k):
    part = np.argpartition(a, a.shape[-1] - k, axis=-1)[..., -k:]
    vals = np.take_along_axis(a, part, -1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    return np.take_along_axis(vals, order, -1), np.take_along_axis(part, order, -1)


def median(f, before=None):
    times = []
    for _ in range(ROUNDS):
        if before:
            before()
        t0 = time.process_time()
        f()
        times.append(time.process_time() - t0)
    times.sort()
    return times[(ROUNDS - 1) // 2]


def write():
    y = x.copy()
    y[mask] = 0


copy_time = median(lambda: x.copy())
cases = {
    "mask_read": lambda: x[mask],
    "mask_write": write,
    "take": lambda: np.take(x, idx),
    "sort_random": lambda: np.sort(x),
    "sort_sorted": lambda: np.sort(s),
    "argsort_random": lambda: np.argsort(x),
    "argsort_sorted": lambda: np.argsort(s),
    "topk5_rows_x1000": lambda: [topk(rows, 5) for _ in range(1000)],
    "topk5_1e7": lambda: topk(x, 5),
    "cumsum": lambda: np.cumsum(x),
    "bincount": lambda: np.bincount(ints),
    "histogram16": lambda: np.histogram(x, bins=16),
    "unique": lambda: np.unique(coarse),
}
for name, f in cases.items():
    t = median(f)
    if name == "mask_write":
        t -= copy_time
    print(name, t)
