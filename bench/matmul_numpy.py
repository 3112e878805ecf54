"""bench/matmul_numpy.py: NumPy's side of bench/matmul.lua, in the same run.

Run by bench/matmul.lua under /usr/bin/python3 (Debian's python3-numpy), with
the same environment (OPENBLAS_NUM_THREADS), once per round: the two sides
take turns, so that a busy machine slows both alike. Prints "blas <path>" for
each BLAS library mapped into this process (/proc/self/maps), then one line
per figure, "name seconds": after two untimed calls, the median of ROUNDS
rounds (default 1) of CPU time per call (time.process_time, as os.clock in
Lua). The names match bench/matmul.lua's.
"""
import statistics
import sys
import time

import numpy as np

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def median(f, reps=1):
    f()  # untimed, twice: first-call costs (BLAS buffers, first-touch pages,
    f()  # glibc raising its mmap threshold after the first free)
    times = []
    for _ in range(ROUNDS):
        t0 = time.process_time()
        for _ in range(reps):
            f()
        times.append((time.process_time() - t0) / reps)
    return statistics.median(times)


def emit(name, f, reps=1):
    print(f"{name} {median(f, reps):.9f}", flush=True)


def blas_libraries():
    seen = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in path and path not in seen:
                seen.append(path)
    return seen


for path in blas_libraries():
    print(f"blas {path}", flush=True)

for dtype in ("float32", "float64"):
    a = np.full((1024, 1024), 0.5, dtype=dtype)
    b = np.full((1024, 1024), 0.25, dtype=dtype)
    out = np.empty((1024, 1024), dtype=dtype)
    emit(f"matmul_1024_{dtype}", lambda: a @ b, reps=3)
    emit(f"matmul_1024_{dtype}_out", lambda: np.matmul(a, b, out=out), reps=3)
    emit(f"matmul_1024_{dtype}_bT", lambda: a @ b.T, reps=3)
small = np.full((64, 64), 0.5, dtype=np.float32)
emit("matmul_64_float32", lambda: small @ small, reps=3000)
tiny = np.full((4, 4), 0.5)
emit("matmul_4_float64", lambda: tiny @ tiny, reps=20000)
batch = np.full((256, 32, 32), 0.5, dtype=np.float32)
emit("matmul_batch_256x32x32_float32", lambda: batch @ batch, reps=80)
mat = np.full((2048, 2048), 0.5)
vec = np.full(2048, 0.25)
emit("matvec_2048_float64", lambda: mat @ vec, reps=20)
ints = np.ones((256, 256), dtype=np.int64)
emit("matmul_256_int64", lambda: ints @ ints, reps=3)
parts = [np.full((100, 1000), 0.5, dtype=np.float32) for _ in range(100)]
emit("concat_100x(100x1000)_float32", lambda: np.concatenate(parts, axis=1), reps=5)
emit("stack_100x(100x1000)_float32", lambda: np.stack(parts, axis=2), reps=5)
