"""bench/dlpack_numpy.py: NumPy's DLPack round trip, np.from_dlpack(x), for
bench/dlpack.lua, alternated with its own (bench/numpy_support.py).

Run by bench/dlpack.lua through /usr/bin/python3 (Debian's python3-numpy). A
round is N round trips, timed in CPU time (time.process_time, as os.clock on
the Lua side), its figure the time per call.
"""
import numpy as np

import numpy_support as ns

N = ns.params(N=200_000)["N"]
x = np.zeros(16)


def round_trip():
    for _ in range(N):
        np.from_dlpack(x)


ns.case("round_trip", round_trip, div=N)
ns.serve()
