"""bench/quantile_numpy.py: NumPy's side of bench/quantile.lua, alternated with
it case by case (bench/numpy_support.py). The names, data and calls match
bench/quantile.lua's."""
import numpy as np

import numpy_support as ns

P = ns.params(N=1000000, SIDE=1000)


def emit(name, f, reps=1):
    ns.case(name, f, reps=reps, warmups=2)


def spread(n, dtype):
    x = np.sin(np.arange(n, dtype=np.float64) * 12.9898) * 43758.5453
    return (x - np.floor(x)).astype(dtype)


N, SIDE = P["N"], P["SIDE"]
f64, f32 = spread(N, "float64"), spread(N, "float32")
i32 = (spread(N, "float64") * 1000000).astype("int32")
nan64 = f64.copy()
nan64[::97] = np.nan
m = spread(SIDE * SIDE, "float64").reshape(SIDE, SIDE)
rows3 = spread(N, "float64")[:N - N % 3].reshape(-1, 3)  # many short slices

emit("median_f64", lambda: np.median(f64))
emit("median_f32", lambda: np.median(f32))
emit("median_i32", lambda: np.median(i32))
emit("nanmedian_f64", lambda: np.nanmedian(nan64))
emit("quantile5_f64", lambda: np.quantile(f64, [0.05, 0.25, 0.5, 0.75, 0.95]))
emit("percentile_dim1", lambda: np.percentile(m, 95, axis=0))
emit("percentile_dim2", lambda: np.percentile(m, 95, axis=1))
emit("median_dim2", lambda: np.median(m, axis=1))
emit("median_rows3", lambda: np.median(rows3, axis=1))
ns.serve()
