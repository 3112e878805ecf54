"""bench/bulk_numpy.py: NumPy's side of bench/bulk.lua, in the same run.

Run by bench/bulk.lua under /usr/bin/python3 (Debian's python3-numpy). Prints
one line per figure, "name seconds", each the median of ROUNDS rounds of CPU
time (time.process_time, as os.clock in Lua: page faults count in both).
The names match bench/bulk.lua's.
"""
import sys
import warnings

import numpy as np

import numpy_support

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
# "main": every figure but the astype pair table; "pairs": the table only,
# or with a third argument only its row for that source dtype.
PART = sys.argv[2] if len(sys.argv) > 2 else "all"
BIG = 32 * 1024 * 1024      # float64 elements: 256 MiB
N = 10_000_000              # elements for fill and astype
PAIRS_N = 1_000_000         # elements for the all-pairs astype table
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
SOURCES = sys.argv[3:4] or DTYPES


def median(f):
    return numpy_support.median(f, ROUNDS)


def emit(name, f):
    numpy_support.emit(name, f, ROUNDS)


def main_figures():
    full = np.ones(BIG)

    def zeros_20():
        for _ in range(20):
            np.zeros(BIG)

    print(f"zeros_256MiB {median(zeros_20) / 20:.9f}", flush=True)
    emit("zeros_fill_64MiB", lambda: np.zeros(BIG // 4).fill(1.5))
    emit("empty_fill_256MiB", lambda: np.empty(BIG).fill(1.5))
    emit("copy_256MiB", lambda: full.copy())
    v = np.empty(N)
    emit("fill_1e7", lambda: v.fill(2.5))
    full = None  # free the 256 MiB before the loop below

    def loop_2000():
        for _ in range(2000):
            c = np.empty(1024 * 1024)
            c.fill(1.0)

    emit("loop_2000x8MiB", loop_2000)
    sq = np.ones((4096, 4096), dtype=np.float32)
    dst = np.empty((4096, 4096), dtype=np.float32)
    emit("transpose_contiguous", lambda: np.ascontiguousarray(sq.T))
    emit("transpose_copy_from", lambda: np.copyto(dst, sq.T))
    src64 = np.ones(N)
    emit("astype_f64_f32", lambda: src64.astype(np.float32))


def pair_figures():
    np.seterr(all="ignore")
    warnings.simplefilter("ignore", np.ComplexWarning)  # complex -> real drops the imaginary part
    for s in SOURCES:
        a = np.ones(PAIRS_N, dtype=s)
        strided = np.ones(2 * PAIRS_N, dtype=s)[::2]
        for d in DTYPES:
            emit(f"astype_{s}_{d}", lambda: a.astype(d))
            emit(f"astype_strided_{s}_{d}", lambda: strided.astype(d))


if PART in ("all", "main"):
    main_figures()
if PART in ("all", "pairs"):
    pair_figures()
