"""bench/random_numpy.py: NumPy's side of bench/random.lua, in the same run.

Prints "name seconds" per figure (the median of ROUNDS rounds of CPU time) for
the same draws from np.random.default_rng(12345): each call allocates its
result, as dlbridge's does.
"""
import sys

import numpy as np

import numpy_support

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 10_000_000

rng = np.random.default_rng(12345)
numpy_support.emit("random_float64", lambda: rng.random(N), ROUNDS)
numpy_support.emit("random_float32", lambda: rng.random(N, dtype=np.float32), ROUNDS)
numpy_support.emit("standard_normal_float64", lambda: rng.standard_normal(N), ROUNDS)
numpy_support.emit("standard_normal_float32",
                   lambda: rng.standard_normal(N, dtype=np.float32), ROUNDS)
numpy_support.emit("normal", lambda: rng.normal(3.0, 2.0, N), ROUNDS)
numpy_support.emit("uniform", lambda: rng.uniform(-1.0, 1.0, N), ROUNDS)
numpy_support.emit("integers_int64", lambda: rng.integers(0, 1000, N), ROUNDS)
numpy_support.emit("integers_int32", lambda: rng.integers(0, 1000, N, dtype=np.int32), ROUNDS)
numpy_support.emit("permutation", lambda: rng.permutation(N), ROUNDS)
