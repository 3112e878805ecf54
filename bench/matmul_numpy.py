"""bench/matmul_numpy.py: NumPy's side of bench/matmul.lua, alternated with it
case by case (bench/numpy_support.py).

Run by bench/matmul.lua under /usr/bin/python3 (Debian's python3-numpy), with
the same environment (OPENBLAS_NUM_THREADS) and sizes. Each case makes two
untimed calls first (first-call costs: BLAS buffers, first-touch pages, glibc
raising its mmap threshold after the first free). The value "blas" is the
BLAS libraries mapped into this process (/proc/self/maps). The names and the
calls a round match bench/matmul.lua's.
"""
import numpy as np

import numpy_support as ns

P = ns.params(MM=1024, GEMV=2048, PARTS=100, SMALL_REPS=3000, TINY_REPS=20000, BATCH_REPS=80,
              INT_REPS=3)
MM, GEMV, PARTS = P["MM"], P["GEMV"], P["PARTS"]


def emit(name, f, reps=1):
    ns.case(name, f, reps=reps, warmups=2)


def blas_libraries():
    seen = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in path and path not in seen:
                seen.append(path)
    return ", ".join(sorted(seen)) or "none"


for dtype in ("float32", "float64"):
    a = np.full((MM, MM), 0.5, dtype=dtype)
    b = np.full((MM, MM), 0.25, dtype=dtype)
    out = np.empty((MM, MM), dtype=dtype)
    emit(f"matmul_1024_{dtype}", lambda a=a, b=b: a @ b, reps=3)
    emit(f"matmul_1024_{dtype}_out", lambda a=a, b=b, out=out: np.matmul(a, b, out=out), reps=3)
    emit(f"matmul_1024_{dtype}_bT", lambda a=a, b=b: a @ b.T, reps=3)
small = np.full((64, 64), 0.5, dtype=np.float32)
emit("matmul_64_float32", lambda: small @ small, reps=P["SMALL_REPS"])
tiny = np.full((4, 4), 0.5)
emit("matmul_4_float64", lambda: tiny @ tiny, reps=P["TINY_REPS"])
batch = np.full((256, 32, 32), 0.5, dtype=np.float32)
emit("matmul_batch_256x32x32_float32", lambda: batch @ batch, reps=P["BATCH_REPS"])
mat = np.full((GEMV, GEMV), 0.5)
vec = np.full(GEMV, 0.25)
emit("matvec_2048_float64", lambda: mat @ vec, reps=20)
ints = np.ones((256, 256), dtype=np.int64)
emit("matmul_256_int64", lambda: ints @ ints, reps=P["INT_REPS"])
parts = [np.full((100, 1000), 0.5, dtype=np.float32) for _ in range(PARTS)]
emit("concat_100x(100x1000)_float32", lambda: np.concatenate(parts, axis=1), reps=5)
emit("stack_100x(100x1000)_float32", lambda: np.stack(parts, axis=2), reps=5)
ns.value("blas", blas_libraries)
ns.serve()
