"""bench/dlpack_numpy.py: NumPy's DLPack round trip, np.from_dlpack(x), in ns per call.

Run by bench/dlpack.lua through /usr/bin/python3 (Debian's python3-numpy), so both
figures come from the same benchmark run. Prints one line: the median ns per call.
"""
import statistics
import time

import numpy as np

N = 200_000
ROUNDS = 7
x = np.zeros(16)


def round_trip():
    t0 = time.perf_counter()
    for _ in range(N):
        np.from_dlpack(x)
    return (time.perf_counter() - t0) / N * 1e9


print(f"{statistics.median(round_trip() for _ in range(ROUNDS)):.1f}")
