"""tests/oracle/quantile_cases.py: randomised cases of dl.median, dl.quantile,
dl.percentile and their nan- forms with NumPy 1.24 as the oracle, for
tests/oracle/quantile_check.lua.

    python3 quantile_cases.py <seed> <dir> [fraction]

writes each case's input (a base array and a layout that views it), its q
(when an array) and NumPy's result as .npy files into <dir> and prints one
line per case:

    <id> <op> <layout> <dims> <keepdims> <method> <q> <outcome>

dims is "all" or 1-based dims joined by ',' (negative ones count from the
end); q is "-" (median), a number, or "array" (<dir>/<id>_q.npy); outcome is
"ok" (the result is <dir>/<id>_out.npy) or the NumPy exception the call
raised: IndexError (dlbridge raises INDEX), ValueError (VALUE) or TypeError
(DTYPE).

Over every real dtype but bfloat16 (NumPy has none); shapes of 0 to 3 dims
with extents 0 to 6, sometimes one long dim (quickselect's partitions, not
only insertion sorts); one dim, a list of dims or all; keepdims; q numbers
(0, 1 and halves among them) and arrays of 0 to 2 dims; values with ties
(small integers, rounded floats), full integer ranges (NumPy's wrapping
subtraction in "linear"), NaN and +-inf; layouts transposed, reversed,
stepped; empty inputs and empty slices; q outside the range.

Where dlbridge chooses differently from NumPy 1.24 (quantile.h), the
expected result is dlbridge's documented one, built here from NumPy's
per-slice results: the dtype never depends on the values (NumPy's nan- forms
take the first slice's, float32 where that slice is all NaN, and a result of
one NaN slice has the input's dtype); q's dims come first (NumPy's nan- forms
misplace those after the first); over an empty input the nan- forms keep q's
dims and raise INDEX for an integer result (NumPy returns nanmean's NaN); an
empty result is returned (NumPy 1.24 raises for some: an empty q over an
empty slice, several dims of an empty input); dtype errors come before q
errors.
"""
import sys

import numpy as np
from oracle_layouts import based, pick_layout

DTYPES = ["float64", "float32", "float16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool"]
OPS = ["median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"]
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


def values(rng, dtype, shape):
    kind = np.dtype(dtype).kind
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if kind in "iu":
        info = np.iinfo(dtype)
        if rng.random() < 0.5:  # ties
            lo = 0 if kind == "u" else -4
            return rng.integers(lo, lo + 9, shape).astype(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    x = rng.standard_normal(shape) * (10.0 ** rng.integers(-2, 4))
    if rng.random() < 0.4:
        x = np.round(x, 0)  # ties
    x = np.asarray(x).astype(dtype)
    if x.size and rng.random() < 0.3:  # NaN and inf in a few places
        flat = x.reshape(-1)
        for _ in range(int(rng.integers(1, 3))):
            flat[rng.integers(flat.size)] = rng.choice([np.nan, np.inf, -np.inf, np.nan])
    if x.size and rng.random() < 0.1:  # a slice (or all) of NaN only
        x[...] = np.nan
    return x


def shape_of(rng):
    ndim = int(rng.choice([0, 1, 1, 2, 2, 3]))
    shape = [int(rng.choice([0, 1, 2, 3, 4, 5, 6], p=[0.05, 0.15, 0.2, 0.2, 0.15, 0.15, 0.1]))
             for _ in range(ndim)]
    if ndim and rng.random() < 0.25:  # a long dim: quickselect's partitions
        shape[int(rng.integers(ndim))] = int(rng.integers(17, 300 if rng.random() < 0.7 else 2500))
    return tuple(shape)


def pick_dims(rng, ndim):
    """NumPy's axis and the Lua text of the same dims."""
    if ndim == 0 or rng.random() < 0.3:
        return None, "all"
    count = int(rng.integers(1, ndim + 1))
    axes = sorted(rng.choice(ndim, count, replace=False).tolist())
    names = [str(d + 1) if rng.random() < 0.6 else str(d - ndim) for d in axes]
    if count == 1 and rng.random() < 0.6:
        return axes[0], names[0]
    return tuple(axes), ",".join(names)


def pick_q(rng, percent):
    special = [0.0, 1.0, 0.5, 0.25, 0.75, 0.1, 0.9]
    def one():
        if rng.random() < 0.03:
            return float(rng.choice([1.5, -0.25, np.nan]))
        if rng.random() < 0.4:
            return float(rng.choice(special))
        return float(rng.random())
    if rng.random() < 0.5:
        q = one()
        return (q * 100 if percent else q), None
    shape = [(int(rng.integers(0, 4)),), (2, 2), ()][int(rng.choice(3, p=[0.7, 0.2, 0.1]))]
    q = np.array([one() for _ in range(int(np.prod(shape)))], np.float64).reshape(shape)
    return None, (q * 100 if percent else q)


def rule_dtype(op, method, dtype):
    kind = np.dtype(dtype).kind
    if op.endswith("median"):
        return dtype if kind == "f" else "float64"
    if method in ("linear", "midpoint"):
        return "float64"
    return dtype


def reduced(a, axis):
    """a with the reduced axes moved last and merged: (kept..., n)."""
    axes = list(range(a.ndim)) if axis is None else \
        list(axis if isinstance(axis, tuple) else (axis,))
    kept = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, kept + axes)
    kshape = tuple(a.shape[d] for d in kept)
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    return moved.reshape(kshape + (n,)), kshape, axes


def result_shape(a, q, axis, keepdims):
    rows, kshape, axes = reduced(a, axis)
    qshape = () if q is None else np.shape(q)
    if keepdims:
        return qshape + tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    return qshape + kshape


def per_slice(fn, a, q, axis, keepdims, dtype):
    """dlbridge's documented result, one NumPy call per slice."""
    rows, kshape, axes = reduced(a, axis)
    qshape = () if q is None else np.shape(q)
    out = np.empty(qshape + kshape, dtype)
    for idx in np.ndindex(*kshape):
        r = fn(rows[idx])
        out[(Ellipsis,) + idx] = np.asarray(r)
    if keepdims:
        out = out.reshape(qshape + tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)))
    return out


def numpy_call(op, a, q, axis, keepdims, method):
    f = getattr(np, op)
    if op.endswith("median"):
        return f(a, axis=axis, keepdims=keepdims)
    return f(a, q, axis=axis, keepdims=keepdims, method=method)


def expected(op, a, q, axis, keepdims, method):
    """NumPy's result, or dlbridge's documented one where they differ."""
    dtype = rule_dtype(op, method, a.dtype.name)
    interp = method in ("linear", "midpoint") and not op.endswith("median")
    if a.dtype == bool and interp:
        raise TypeError("booleans do not interpolate")
    shape = result_shape(a, q, axis, keepdims)
    if q is not None:  # q's range check
        np.asarray(numpy_call(op.replace("nan", ""), np.zeros(1), q, None, False, method))
    if int(np.prod(shape)) == 0:  # NumPy 1.24 raises for some (q empty, reshape bugs)
        return np.zeros(shape, dtype)
    if op.startswith("nan") and a.size == 0:  # NumPy: nanmean, q's dims dropped
        if np.dtype(dtype).kind != "f":
            raise IndexError("an integer result cannot be NaN")
        return np.full(shape, np.nan, dtype)
    r = np.asarray(numpy_call(op, a, q, axis, keepdims, method))
    if r.dtype != np.dtype(dtype) and r.dtype.kind == "f" and np.all(np.isnan(r)):
        r = r.astype(dtype)  # NumPy: a lone NaN slice's result is that slice's NaN element
    if op.startswith("nan") and (r.dtype != np.dtype(dtype) or np.ndim(q) > 1):
        # apply_along_axis: the first slice's dtype; q's dims after the first misplaced
        one = (lambda row: getattr(np, op)(row)) if op.endswith("median") else \
            (lambda row: getattr(np, op)(row, q, method=method))
        r = per_slice(one, a, q, axis, keepdims, dtype)
    return r


def main():
    seed = int(sys.argv[1])
    outdir = sys.argv[2]
    fraction = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    rng = np.random.default_rng(seed)
    per = max(1, int(round(4 * fraction)))
    count = 0
    with np.errstate(all="ignore"):
        import warnings
        warnings.simplefilter("ignore")
        for op in OPS:
            for dtype in DTYPES:
                for _ in range(per * (1 if op.endswith("median") else 3)):
                    cid = "c%d" % count
                    count += 1
                    a = values(rng, dtype, shape_of(rng))
                    layout = pick_layout(rng, a)
                    np.save("%s/%s_a.npy" % (outdir, cid), based(a, layout))
                    axis, dims = pick_dims(rng, a.ndim)
                    keepdims = bool(rng.random() < 0.3)
                    method = "-" if op.endswith("median") else \
                        METHODS[int(rng.integers(len(METHODS)))]
                    q, qtext = None, "-"
                    if not op.endswith("median"):
                        qnum, qarr = pick_q(rng, op.endswith("percentile"))
                        if qarr is None:
                            q, qtext = qnum, repr(qnum)
                        else:
                            q, qtext = qarr, "array"
                            np.save("%s/%s_q.npy" % (outdir, cid), qarr)
                    try:
                        r = expected(op, a, q, axis, keepdims, method)
                        outcome = "ok"
                        np.save("%s/%s_out.npy" % (outdir, cid), r)
                    except (IndexError, ValueError, TypeError) as e:
                        outcome = type(e).__name__
                    print(cid, op, layout, dims, int(keepdims), method, qtext, outcome)


if __name__ == "__main__":
    main()
