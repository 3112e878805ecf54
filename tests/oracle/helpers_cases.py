"""tests/oracle/helpers_cases.py: NumPy as the oracle of dlbridge's
construction, shape and comparison helpers (dl.eye, dl.tile, dl.pad,
dl.convolve, dl.isclose, ...), driven by tests/oracle/construct_oracle.lua.

Reads one case a line from stdin, "<id>\t<python expression>", where the
expression may call A(dtype, shape, hex) (an array from its C-order bytes;
shape "2x3", "-" for 0-d) and np. Writes one line a case:
  <id>\tR:<dtype>:<shape>:<hex>    an array result
  <id>\tL:<r1>;<r2>;...            a list of arrays (each dtype:shape:hex)
  <id>\tB:true|false               a Python bool (a NumPy scalar is a 0-d array)
  <id>\tE:<exception class>        NumPy raised
Run by /usr/bin/python3 (Debian's NumPy 1.24)."""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")


def A(dtype, shape, hx):
    dims = () if shape == "-" else tuple(int(e) for e in shape.split("x"))
    data = b"" if hx == "-" else bytes.fromhex(hx)
    return np.frombuffer(data, dtype=dtype).reshape(dims).copy()


def enc(r):
    r = np.asarray(r)
    shape = "x".join(str(e) for e in r.shape) or "-"
    return "%s:%s:%s" % (r.dtype.name, shape, r.tobytes(order="C").hex() or "-")


def main():
    env = {"np": np, "A": A, "inf": float("inf"), "nan": float("nan")}
    for line in sys.stdin:
        case, expr = line.rstrip("\n").split("\t", 1)
        try:
            r = eval(expr, env)
            if isinstance(r, bool):  # a Python bool (allclose, array_equal)
                out = "B:" + ("true" if r else "false")
            elif isinstance(r, (list, tuple)):
                out = "L:" + ";".join(enc(x) for x in r)
            else:
                out = "R:" + enc(np.asarray(r))
        except Exception as e:  # the case expects a dlbridge.Error
            out = "E:" + type(e).__name__
        sys.stdout.write(case + "\t" + out + "\n")


main()
