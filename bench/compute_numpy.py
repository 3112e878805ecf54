"""bench/compute_numpy.py: NumPy's side of bench/compute.lua, in the same run.

Run by bench/compute.lua under /usr/bin/python3 (Debian's python3-numpy), with
the same environment (OPENBLAS_NUM_THREADS included). Prints one line per
figure, "name seconds", each the median of ROUNDS rounds of CPU time
(time.process_time, as os.clock in Lua), and "blas <path>" for each BLAS
library mapped into this process once a matmul has run. The names and the
data (the same formulas, so the same values) match bench/compute.lua's.
"""
import sys

import numpy as np

import numpy_support

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 10_000_000        # elements of the large float32 operands
SMALL = 10            # elements of the small operands
CALLS = 100_000       # calls per round on the small operands
SIDE = 3000           # the square matrix reduced along each dim
MM = 1024             # matmul side


def median(f):
    return numpy_support.median(f, ROUNDS)


def emit(name, f):
    numpy_support.emit(name, f, ROUNDS)


# Quasi-random values in [0, 1): the fractional parts of i * g (as compute.lua).
def spread(n, g):
    return (np.arange(n, dtype=np.float64) * g % 1.0).astype(np.float32)


a = spread(N, 0.6180339887498949)
b = spread(N, 0.7548776662466927)
centred = a - np.float32(0.5)
c = np.empty_like(a)

emit("add_1e7", lambda: a + b)
emit("mul_1e7", lambda: a * b)
emit("mul2_add1_1e7", lambda: a * 2 + 1)
emit("sqrt_1e7", lambda: np.sqrt(a))
emit("exp_1e7", lambda: np.exp(a))
emit("gt0_1e7", lambda: centred > 0)
emit("add_out_1e7", lambda: np.add(a, b, out=c))

sa, sb = a[:SMALL].copy(), b[:SMALL].copy()


# Each loop runs the expression inline, as bench/compute.lua does (a function
# call per iteration would add some 25 ns to NumPy's figure); the loop's own
# cost stays in on both sides (about 7 ns a turn in Python, 1 ns in Lua).
def small_add():
    for _ in range(CALLS):
        sa + sb


def small_mul_scalar():
    for _ in range(CALLS):
        sa * 2


def small_sqrt():
    for _ in range(CALLS):
        np.sqrt(sa)


def small_sum():
    for _ in range(CALLS):
        sa.sum()


for f in (small_add, small_mul_scalar, small_sqrt, small_sum):
    print(f"{f.__name__} {median(f) / CALLS:.12f}", flush=True)

emit("sum_1e7", lambda: a.sum())
emit("max_1e7", lambda: a.max())
emit("argmax_1e7", lambda: a.argmax())
square = a[:SIDE * SIDE].reshape(SIDE, SIDE)
emit("sum_dim1_3000", lambda: square.sum(axis=0))
emit("sum_dim2_3000", lambda: square.sum(axis=1))

matrix = a.reshape(1000, N // 1000)
row = b[:N // 1000]
emit("broadcast_add", lambda: matrix + row)

m32 = a[:MM * MM].reshape(MM, MM)
n32 = b[:MM * MM].reshape(MM, MM)
m64, n64 = m32.astype(np.float64), n32.astype(np.float64)
emit("matmul_f32", lambda: m32 @ n32)
emit("matmul_f64", lambda: m64 @ n64)
with open("/proc/self/maps") as maps:
    libs = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
for lib in libs:
    print(f"blas {lib}", flush=True)
