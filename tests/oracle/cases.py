"""tests/oracle/cases.py: randomised cases with NumPy as the oracle.

Prints one case per line for tests/oracle/check.lua, which runs each case
through dlbridge and compares the bytes:

    <op> <src dtype> <dst dtype> <shape> <src layout> <dst layout> <src hex> <dst hex> <want hex>

- shape: the base array's shape, "2x3" ("-" for 0-d);
- layout: operations applied to a base array to get the operand, as
  "T" (reverse dims), "step<d>.<k>" (every k-th along dim d), "rev<d>"
  (reversed along dim d), "bcast<n>" (a new leading dim of extent n, stride
  0), joined by "+", "-" for none; dims are 1-based as in dlbridge;
- ops: "astype" (want = the src view cast to dst dtype, C order) and
  "copy_from" (the dst view gets the src view, cast; want = the dst base
  afterwards); "copy_from_self" copies a view of the dst base into another
  view of it (overlapping operands, NumPy's "as if copied").

Usage: /usr/bin/python3 cases.py [seed] [count per pair]
"""
import sys

import numpy as np

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 1
PER_PAIR = int(sys.argv[2]) if len(sys.argv) > 2 else 6
rng = np.random.default_rng(SEED)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def random_values(dtype, n, target=None):
    """n random values of dtype; when target is an integer dtype and dtype is
    a float, only values that dlbridge casts (finite, in target's range)."""
    dt = np.dtype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in INTS:
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    if target in INTS:
        info = np.iinfo(np.dtype(target))
        lo, hi = max(float(info.min), -60000.0), min(float(info.max), 60000.0)
        vals = rng.uniform(lo, hi, n)
        if dtype.startswith("complex"):
            vals = vals + 1j * rng.normal(size=n)
        vals = vals.astype(dt)
        real = vals.real.astype(np.float64)
        vals[(real < info.min) | (real > info.max)] = 0  # rounding into dt can leave the range
        return vals
    scale = 10.0 ** rng.integers(-3, 6, n)
    vals = rng.normal(size=n) * scale
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e-300, 65519.0, 65520.0, 0.5, 1.5, 2.5]
    for i in range(min(n, len(specials))):
        if rng.random() < 0.5:
            vals[rng.integers(0, n)] = specials[i]
    if dtype.startswith("complex"):
        vals = vals + 1j * rng.normal(size=n) * scale
    with np.errstate(all="ignore"):
        return vals.astype(dt)


def apply_layout(a, layout):
    for op in [] if layout == "-" else layout.split("+"):
        if op == "T":
            a = a.T
        elif op.startswith("step"):
            d, k = (int(x) for x in op[4:].split("."))
            index = [slice(None)] * a.ndim
            index[d - 1] = slice(None, None, k)
            a = a[tuple(index)]
        elif op.startswith("rev"):
            d = int(op[3:])
            index = [slice(None)] * a.ndim
            index[d - 1] = slice(None, None, -1)
            a = a[tuple(index)]
        elif op.startswith("bcast"):
            a = np.broadcast_to(a, (int(op[5:]),) + a.shape)
        else:
            raise ValueError(op)
    return a


def random_layout(ndim, allow_bcast=True):
    ops = []
    if ndim >= 2 and rng.random() < 0.4:
        ops.append("T")
    for d in range(1, ndim + 1):
        r = rng.random()
        if r < 0.25:
            ops.append(f"step{d}.{int(rng.integers(2, 4))}")
        elif r < 0.45:
            ops.append(f"rev{d}")
    if allow_bcast and rng.random() < 0.2:
        ops.append(f"bcast{int(rng.integers(1, 4))}")
    return "+".join(ops) if ops else "-"


def random_shape():
    if rng.random() < 0.15:  # big enough for the tiled (transpose) kernels
        return tuple(int(rng.integers(8, 41)) for _ in range(int(rng.choice([2, 3]))))
    ndim = int(rng.choice([0, 1, 1, 2, 2, 3]))
    shape = tuple(int(rng.integers(0 if rng.random() < 0.05 else 1, 7)) for _ in range(ndim))
    return shape


def fmt_shape(shape):
    return "x".join(str(s) for s in shape) if shape else "-"


def hexof(a):
    return np.ascontiguousarray(a).tobytes().hex() or "-"


def emit(*fields):
    print(" ".join(fields))


def astype_case(src, dst):
    shape = random_shape()
    base = random_values(src, int(np.prod(shape)), dst).reshape(shape)
    layout = random_layout(len(shape))
    view = apply_layout(base, layout)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = view.astype(dst)
    emit("astype", src, dst, fmt_shape(shape), layout, "-", hexof(base), "-", hexof(want))


def copy_case(src, dst):
    """dst_view <- src_view, where src_view has dst_view's shape: both are
    laid out from bases of their own shapes."""
    shape = random_shape()
    dst_layout = random_layout(len(shape), allow_bcast=False)
    dbase = random_values(dst, int(np.prod(shape))).reshape(shape)
    dview = apply_layout(dbase, dst_layout)
    # A src base whose layout "T" (or not) gives dview's shape.
    if dview.ndim >= 2 and rng.random() < 0.5:
        sbase_shape, src_layout = dview.shape[::-1], "T"
    else:
        sbase_shape, src_layout = dview.shape, "-"
    if dview.ndim >= 1 and rng.random() < 0.3:
        d = int(rng.integers(1, dview.ndim + 1))
        src_layout = (src_layout + "+" if src_layout != "-" else "") + f"rev{d}"
    sbase = random_values(src, int(np.prod(sbase_shape)), dst).reshape(sbase_shape)
    sview = apply_layout(sbase, src_layout)
    want = dbase.copy()
    import warnings
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        apply_layout(want, dst_layout)[...] = sview
    emit("copy_from", src, dst, fmt_shape(sbase_shape) + "/" + fmt_shape(shape), src_layout,
         dst_layout, hexof(sbase), hexof(dbase), hexof(want))


def copy_self_case(dtype):
    """Overlapping operands: a view of one base copied into another view of it."""
    n = int(rng.integers(2, 12))
    base = random_values(dtype, n)
    src_layout = rng.choice(["rev1", "-"])
    want = base.copy()
    want[...] = apply_layout(want, src_layout).copy()
    emit("copy_from_self", dtype, dtype, fmt_shape((n,)), src_layout, "-", hexof(base), "-",
         hexof(want))


for s in DTYPES:
    for d in DTYPES:
        for _ in range(PER_PAIR):
            astype_case(s, d)
            copy_case(s, d)
    for _ in range(PER_PAIR):
        copy_self_case(s)
