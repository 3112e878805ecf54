"""bench/files_npy_numpy.py: NumPy's side of bench/files_npy.lua, in the same run.

Run by bench/files_npy.lua under /usr/bin/python3 (Debian's python3-numpy) as
`files_npy_numpy.py ROUNDS DIR`: the files go in DIR, as dlbridge's do. Prints
one line per figure, "name seconds", each the median of ROUNDS rounds of CPU
time (time.process_time, as os.clock in Lua; the time the kernel spends
copying to and from the page cache counts on both sides). The names and the
data match bench/files_npy.lua's.
"""
import io
import os
import sys

import numpy as np

import numpy_support

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
DIR = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
N = 32 * 1024 * 1024          # float64 elements: 256 MiB
ROWS, COLS = 4096, 8192       # the same 256 MiB as a matrix


def emit(name, f):
    numpy_support.emit(name, f, ROUNDS)


path = os.path.join(DIR, "dlbridge-bench-numpy-%d.npy" % os.getpid())
try:
    a = np.arange(N, dtype=np.float64)
    emit("save_256MiB", lambda: np.save(path, a))
    emit("load_copy_256MiB", lambda: np.load(path))
    emit("load_view_256MiB", lambda: np.load(path, mmap_mode="r"))
    s = io.BytesIO()
    np.save(s, a)
    raw = s.getvalue()
    emit("tonpy_256MiB", lambda: np.save(io.BytesIO(), a))
    emit("fromnpy_256MiB", lambda: np.load(io.BytesIO(raw)))
    del raw, s
    m = a.reshape(ROWS, COLS)
    emit("save_strided_128MiB", lambda: np.save(path, m[:, ::2]))
    # m.T is Fortran-contiguous: np.save writes it as it lies, fortran_order True
    emit("save_transposed_256MiB", lambda: np.save(path, m.T))
finally:
    if os.path.exists(path):
        os.remove(path)
