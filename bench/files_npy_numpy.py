"""bench/files_npy_numpy.py: NumPy's side of bench/files_npy.lua, alternated
with it case by case (bench/numpy_support.py).

Run by bench/files_npy.lua under /usr/bin/python3 (Debian's python3-numpy) with
`N=... ROWS=... DIR=...`: the files go in DIR, as dlbridge's do. The time the
kernel spends copying to and from the page cache counts on both sides (CPU
time). The names and the data match bench/files_npy.lua's.
"""
import io
import os

import numpy as np

import numpy_support as ns

P = ns.params(N=32 * 1024 * 1024, ROWS=4096, DIR="/tmp")
N, ROWS, DIR = P["N"], P["ROWS"], P["DIR"]
COLS = N // ROWS

path = os.path.join(DIR, "dlbridge-bench-numpy-%d.npy" % os.getpid())
a = np.arange(N, dtype=np.float64)
ns.case("save_256MiB", lambda: np.save(path, a))
ns.case("load_copy_256MiB", lambda: np.load(path))
ns.case("load_view_256MiB", lambda: np.load(path, mmap_mode="r"))
ns.case("tonpy_256MiB", lambda: np.save(io.BytesIO(), a))


def make_fromnpy():
    s = io.BytesIO()
    np.save(s, a)
    raw = s.getvalue()
    return lambda: np.load(io.BytesIO(raw))


ns.case("fromnpy_256MiB", make=make_fromnpy)
m = a.reshape(ROWS, COLS)
ns.case("save_strided_128MiB", lambda: np.save(path, m[:, ::2]))
# m.T is Fortran-contiguous: np.save writes it as it lies, fortran_order True
ns.case("save_transposed_256MiB", lambda: np.save(path, m.T))
try:
    ns.serve()
finally:
    if os.path.exists(path):
        os.remove(path)
