"""bench/ptr_numpy.py: NumPy's side of bench/ptr.lua (LuaJIT), alternated with
it round by round (bench/numpy_support.py): the sum of the same N float32
from np.random.default_rng(1)."""
import numpy as np

import numpy_support as ns

N = ns.params(N=10_000_000)["N"]
a = np.random.default_rng(1).random(N, dtype=np.float32)
ns.case("sum", a.sum)
ns.serve()
