"""bench/random_numpy.py: NumPy's side of bench/random.lua, alternated with it
case by case (bench/numpy_support.py).

The same draws from np.random.default_rng(12345): each call allocates its
result, as dlbridge's does.
"""
import numpy as np

import numpy_support as ns

N = ns.params(N=10_000_000)["N"]

rng = np.random.default_rng(12345)
ns.case("random_float64", lambda: rng.random(N))
ns.case("random_float32", lambda: rng.random(N, dtype=np.float32))
ns.case("standard_normal_float64", lambda: rng.standard_normal(N))
ns.case("standard_normal_float32", lambda: rng.standard_normal(N, dtype=np.float32))
ns.case("normal", lambda: rng.normal(3.0, 2.0, N))
ns.case("uniform", lambda: rng.uniform(-1.0, 1.0, N))
ns.case("integers_int64", lambda: rng.integers(0, 1000, N))
ns.case("integers_int32", lambda: rng.integers(0, 1000, N, dtype=np.int32))
ns.case("permutation", lambda: rng.permutation(N))
ns.case("exponential", lambda: rng.exponential(2.0, N))
ns.case("gamma_0.5", lambda: rng.gamma(0.5, 1.0, N))
ns.case("gamma_3", lambda: rng.gamma(3.0, 1.0, N))
ns.case("beta_0.5_0.5", lambda: rng.beta(0.5, 0.5, N))
ns.case("beta_2_5", lambda: rng.beta(2.0, 5.0, N))
ns.case("poisson_4", lambda: rng.poisson(4.0, N))
ns.case("poisson_100", lambda: rng.poisson(100.0, N))
ns.case("binomial_20_0.5", lambda: rng.binomial(20, 0.5, N))
ns.case("binomial_1000_0.3", lambda: rng.binomial(1000, 0.3, N))
ns.case("choice_n", lambda: rng.choice(1000, N))
ns.case("choice_p", lambda: rng.choice(5, N, p=[0.1, 0.2, 0.3, 0.3, 0.1]))
ns.case("choice_no_replace", lambda: rng.choice(N, N // 10, replace=False))
ns.serve()
