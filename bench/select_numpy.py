"""bench/select_numpy.py: NumPy's side of bench/select.lua, alternated with it
case by case (bench/numpy_support.py).

The data come from the same formulas as bench/select.lua's. top-k is NumPy's
idiom for the k largest, sorted, with their indices: argpartition, then a sort
of the k.

Run as `select_numpy.py mode=argsort-memory N=n` (a fresh process, as the Lua
side's), it prints "traced rss": the peak bytes tracemalloc saw during
np.argsort(x) and the growth of the peak RSS (VmHWM, reset through
/proc/self/clear_refs), x made in blocks (no temporaries of n elements).
"""
import tracemalloc

import numpy as np

import numpy_support as ns

P = ns.params(N=10_000_000, SMALL_BINS=1_000_000, SETS_N=1_000_000, mode="serve")
N = P["N"]
G, G2 = 0.6180339887498949, 0.7548776662466927


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return -1


def argsort_memory():
    x = np.empty(N, dtype=np.float32)
    for s in range(0, N, 65536):
        e = min(N, s + 65536)
        x[s:e] = np.arange(s, e, dtype=np.float64) * G % 1.0
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss_before = status("VmHWM")
    except OSError:
        rss_before = -1
    tracemalloc.start()
    r = np.argsort(x)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = status("VmHWM")
    print(f"{traced} {rss - rss_before if rss_before >= 0 else -1} {r.size}")


if P["mode"] == "argsort-memory":
    argsort_memory()
    raise SystemExit

i = np.arange(N, dtype=np.float64)
x = (i * G % 1.0).astype(np.float32)
s = np.sort(x)
mask = x < 0.5
idx = ((i * G2 % 1.0) * N).astype(np.int64)
ints = ((i * G % 1.0) * 1000).astype(np.int64)
ints32 = ints.astype(np.int32)
ints32_small = ints32[:P["SMALL_BINS"]].copy()
wide32 = np.floor(i * G2 % 1.0 * 2.0**32 - 2.0**31).astype(np.int32)
rows = x[:8000].reshape(8, 1000)
coarse = np.floor((i * G % 1.0) * 100000).astype(np.float32)
del i
j = np.arange(P["SETS_N"], dtype=np.float64)
members3, members5 = np.floor(j * G % 1.0 * 2 * 1000), np.floor(j * G % 1.0 * 2 * 100000)
tests3 = np.floor(np.arange(1000, dtype=np.float64) * G2 % 1.0 * 2 * 1000)
tests5 = np.floor(np.arange(100000, dtype=np.float64) * G2 % 1.0 * 2 * 100000)
members3_int, tests3_int = members3.astype(np.int64), tests3.astype(np.int64)
tiebreak, primary = j * G2 % 1.0, np.floor(j * G % 1.0 * 1000).astype(np.int64)
distinct5 = np.floor(j * G % 1.0 * 100000)
del j


def topk(a, k):
    part = np.argpartition(a, a.shape[-1] - k, axis=-1)[..., -k:]
    vals = np.take_along_axis(a, part, -1)
    order = np.argsort(-vals, axis=-1, kind="stable")
    return np.take_along_axis(vals, order, -1), np.take_along_axis(part, order, -1)


def write(y):
    y[mask] = 0


ns.case("mask_read", lambda: x[mask])
ns.case("mask_write", write, prepare=x.copy)
ns.case("take", lambda: np.take(x, idx))
ns.case("sort_random", lambda: np.sort(x))
ns.case("sort_sorted", lambda: np.sort(s))
ns.case("sort_int32", lambda: np.sort(wide32))
ns.case("argsort_random", lambda: np.argsort(x))
ns.case("argsort_sorted", lambda: np.argsort(s))
ns.case("topk5_rows_x1000", lambda: [topk(rows, 5) for _ in range(1000)])
ns.case("topk5_1e7", lambda: topk(x, 5))
ns.case("cumsum", lambda: np.cumsum(x))
ns.case("bincount", lambda: np.bincount(ints))
ns.case("bincount_int32", lambda: np.bincount(ints32))
ns.case("bincount_int32_small", lambda: np.bincount(ints32_small))
ns.case("histogram16", lambda: np.histogram(x, bins=16))
ns.case("unique", lambda: np.unique(coarse))
ns.case("unique_random", lambda: np.unique(x))
ns.case("unique_int32", lambda: np.unique(wide32))
ns.case("isin_1e3", lambda: np.isin(members3, tests3))
ns.case("isin_1e5", lambda: np.isin(members5, tests5))
ns.case("isin_int_1e3", lambda: np.isin(members3_int, tests3_int))
ns.case("lexsort_2x1e6", lambda: np.lexsort((tiebreak, primary)))
ns.case("unique_index_1e6", lambda: np.unique(distinct5, return_index=True))
ns.serve()
