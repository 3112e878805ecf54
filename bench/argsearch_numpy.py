"""bench/argsearch_numpy.py: NumPy's side of bench/argsearch.lua, alternated
with it case by case (bench/numpy_support.py).

The data come from the same formulas as bench/argsearch.lua's; each case makes
its data when it starts and drops it when done.
"""
import numpy as np

import numpy_support as ns

N = ns.params(N=10_000_000)["N"]
G = 0.6180339887498949
HALF = {"int8": 2.0**7, "int32": 2.0**31, "int64": 2.0**62}


def make(t, data, n):
    if data == "equal":
        return np.zeros(n, dtype=t)
    if data == "ascending":
        x = np.arange(n, dtype=np.float64) / n
    else:
        x = np.arange(n, dtype=np.float64) * G % 1.0
    if t in HALF:
        x = x * (2 * HALF[t]) - HALF[t]
    x = x.astype(t)
    if data == "nan last":
        x[-1] = np.nan
    return x


def maker(t, data, step):
    def made():
        x = make(t, data, N * step)[::step]
        if data == "nan last" and step == 2:
            x[-1] = np.nan
        return x.argmax
    return made


for t in ("float32", "float64", "int8", "int32", "int64"):
    for data in ("random", "ascending", "equal", "nan last"):
        if data == "nan last" and t in HALF:
            continue
        for step in (1, 2):
            ns.case(f"{t}_{data.replace(' ', '_')}_{step}", make=maker(t, data, step))
ns.serve()
