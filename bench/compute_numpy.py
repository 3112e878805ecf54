"""bench/compute_numpy.py: NumPy's side of bench/compute.lua, alternated with
it case by case (bench/numpy_support.py).

Run by bench/compute.lua under /usr/bin/python3 (Debian's python3-numpy), with
the same environment (OPENBLAS_NUM_THREADS included) and sizes. The names and
the data (the same formulas, so the same values) match bench/compute.lua's.
The value "blas" is the BLAS libraries mapped into this process.
"""
import numpy as np

import numpy_support as ns

P = ns.params(N=10_000_000, CALLS=100_000, SIDE=3000, MM=1024, BIG=100_000_000,
              MATH=1_000_000, COLS=10_000, NANS=1_000_000)
N, CALLS, SIDE, MM, BIG, MATH, COLS, NANS = (P[k] for k in ("N", "CALLS", "SIDE", "MM", "BIG",
                                                            "MATH", "COLS", "NANS"))
SMALL = 10


# Quasi-random values in [0, 1): the fractional parts of i * g (as compute.lua).
def spread(n, g):
    return (np.arange(n, dtype=np.float64) * g % 1.0).astype(np.float32)


a = spread(N, 0.6180339887498949)
b = spread(N, 0.7548776662466927)
centred = a - np.float32(0.5)
c = np.empty_like(a)

ns.case("add_1e7", lambda: a + b)
ns.case("mul_1e7", lambda: a * b)
ns.case("mul2_add1_1e7", lambda: a * 2 + 1)
ns.case("sqrt_1e7", lambda: np.sqrt(a))
ns.case("exp_1e7", lambda: np.exp(a))
ns.case("gt0_1e7", lambda: centred > 0)
ns.case("add_out_1e7", lambda: np.add(a, b, out=c), reps=5)

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


def small_slice():
    for _ in range(CALLS):
        sa[1:5]


def small_zeros():
    for _ in range(CALLS):
        np.zeros(SMALL, dtype=np.float32)


def small_copy():
    for _ in range(CALLS):
        sa.copy()


def small_astype():
    for _ in range(CALLS):
        sa.astype(np.float64)


for f in (small_add, small_mul_scalar, small_sqrt, small_sum, small_slice, small_zeros,
          small_copy, small_astype):
    ns.case(f.__name__, f, div=CALLS)

ns.case("sum_1e7", lambda: a.sum())
ns.case("max_1e7", lambda: a.max())
ns.case("argmax_1e7", lambda: a.argmax())


def make_sum_1e8():
    big = np.concatenate([a] * (BIG // N))
    return big.sum


ns.case("sum_1e8", make=make_sum_1e8)
square = a[:SIDE * SIDE].reshape(SIDE, SIDE)
ns.case("sum_dim1_3000", lambda: square.sum(axis=0))
ns.case("sum_dim2_3000", lambda: square.sum(axis=1))
wide = a.reshape(N // COLS, COLS)
ns.case("rowsum_float32", lambda: wide.sum(axis=1))


def make_rowsum_float64():
    wide64 = wide.astype(np.float64)
    return lambda: wide64.sum(axis=1)


ns.case("rowsum_float64", make=make_rowsum_float64)

# NaN where the other quasi-random sequence is below 0.1 (as compute.lua).
gappy32 = np.where(b[:NANS] < 0.1, np.float32(np.nan), a[:NANS])
gappy64 = gappy32.astype(np.float64)
for fname in ("nansum", "nanmax", "nanmean"):
    for dname, data in (("float32", gappy32), ("float64", gappy64)):
        ns.case(f"{fname}_{dname}", lambda f=getattr(np, fname), x=data: f(x))

m32 = a[:MATH]
m64 = m32.astype(np.float64)
ns.case("tanh_float32", lambda: np.tanh(m32))
ns.case("sin_float64", lambda: np.sin(m64))
ns.case("exp_float64", lambda: np.exp(m64))

matrix = a.reshape(1000, N // 1000)
row = b[:N // 1000]
ns.case("broadcast_add", lambda: matrix + row)

p32 = a[:MM * MM].reshape(MM, MM)
q32 = b[:MM * MM].reshape(MM, MM)
p64, q64 = p32.astype(np.float64), q32.astype(np.float64)
ns.case("matmul_f32", lambda: p32 @ q32)
ns.case("matmul_f64", lambda: p64 @ q64)


def blas():
    with open("/proc/self/maps") as maps:
        libs = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    return ", ".join(libs) or "none"


ns.value("blas", blas)
ns.serve()
