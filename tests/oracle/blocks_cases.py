"""tests/oracle/blocks_cases.py: randomised float sums over blocks (a 2x2
block mean: a:reshape{h, 2, w, 2}:mean{dim = {2, 4}}) with NumPy 1.24 as
the oracle, bit for bit, for tests/oracle/blocks_check.lua. The reduced
dims are short (2 to 7 elements) and lie beside kept ones: the walks that
hand many short runs to one kernel call must add in NumPy's order.

One case a line: <id> <op> <dtype> <shape> <dims> <input hex> <result hex>
(shape "x" joined, dims 1-based "," joined; the result C-ordered).
Values span 7 decades with signs; a fifth of the cases hold NaNs.
"""
import sys

import numpy as np

seed, fraction = int(sys.argv[1]), float(sys.argv[3])
rng = np.random.default_rng(seed)
OPS = ["sum", "mean", "nansum", "nanmean", "std", "var"]
DIMS = [(1, 3), (0, 3), (1,), (3,), (0, 1, 3)]

for case in range(max(1, int(120 * fraction))):
    dtype = [np.float32, np.float64][case % 2]
    shape = (int(rng.integers(1, 30)), int(rng.integers(2, 8)), int(rng.integers(2, 50)),
             int(rng.integers(2, 8)))
    n = int(np.prod(shape))
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    if case % 5 == 0:
        x[rng.integers(0, n, 5)] = np.nan
    op, dims = OPS[case % len(OPS)], DIMS[int(rng.integers(len(DIMS)))]
    with np.errstate(all="ignore"):
        want = np.ascontiguousarray(getattr(np, op)(x.reshape(shape), axis=dims))
    print("c%d %s %s %s %s %s %s" % (case, op, np.dtype(dtype).name, "x".join(map(str, shape)),
                                     ",".join(str(d + 1) for d in dims), x.tobytes().hex(),
                                     want.tobytes().hex()))
