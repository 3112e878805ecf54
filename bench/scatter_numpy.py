"""bench/scatter_numpy.py: NumPy's side of bench/scatter.lua, alternated with
it case by case (bench/numpy_support.py). The names, operands and calls a
round match bench/scatter.lua's."""
import numpy as np

import numpy_support as ns

P = ns.params(N=1000000, ROWS=100000)
N = P["N"]


def indices(n, bins):
    return np.arange(n, dtype=np.int64) * 7919 % bins


def values(n, dtype=np.float64):
    return (np.arange(n) % 17 / 17).astype(dtype)


OPS = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}
for bins in (1000, 100000):
    idx, v = indices(N, bins), values(N)
    v_mul = values(N) / 1e4 + 1
    for name, ufunc in OPS.items():
        target = np.ones(bins) if name == "mul" else np.zeros(bins)
        vals = v_mul if name == "mul" else v
        ns.case(f"{name}_{bins}",
                lambda u=ufunc, t=target, i=idx, w=vals: u.at(t, i, w))

idx3 = indices(N, 1000)
counts = np.zeros(1000, np.int64)
ns.case("histogram_int64", lambda: np.add.at(counts, idx3, 1))
t32, v32 = np.zeros(1000, np.float32), values(N, np.float32)
ns.case("add_float32", lambda: np.add.at(t32, idx3, v32))
rows, ridx = np.zeros((1000, 16)), indices(P["ROWS"], 1000)
rvals = values(P["ROWS"] * 16).reshape(P["ROWS"], 16)
ns.case("add_rows", lambda: np.add.at(rows, ridx, rvals))
ns.serve()
