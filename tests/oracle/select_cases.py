"""tests/oracle/select_cases.py: randomised cases of dlbridge's selecting,
sorting, scanning and counting operations with NumPy as the oracle, for
tests/oracle/select_check.lua.

    python3 select_cases.py <seed> <dir>

writes each case's input (a base array and a layout that views it) and
NumPy's results as .npy files into <dir> and prints one line per case:

    <id> <op> <layout> <params>

params are key=value pairs separated by ';' (no spaces). The checker loads
<dir>/<id>_in.npy (and _idx, _val, _w, _edges where the case has them),
applies the layout, runs the operation, and compares with <dir>/<id>_out<k>.npy.

Over every NumPy dtype (bfloat16 has no NumPy dtype and is left to the
specs); shapes with 0 to 3 dims, empty ones, lanes longer than the top-k
heap's threshold; layouts transposed, reversed, stepped; NaN, -0.0, +-inf,
and many ties (small value ranges). Where dlbridge's contract is looser than
one NumPy result (the order of ties without stable), the checker checks the
contract instead, and says so.
"""
import sys
import warnings

import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float16", "float32", "float64", "complex64", "complex128"]
LAYOUTS = ["-", "T", "rev1", "step1.2", "rev2"]


def apply_layout(a, layout):
    for op in [] if layout == "-" else layout.split("+"):
        if op == "T":
            a = a.T
            continue
        name = op.rstrip("0123456789.")
        arg = op[len(name):]
        d = int(arg.split(".")[0]) - 1
        k = int(arg.split(".")[1]) if "." in arg else 1
        sl = {"rev": slice(None, None, -1), "step": slice(None, None, k)}[name]
        index = [slice(None)] * a.ndim
        index[d] = sl
        a = a[tuple(index)]
    return a


def values(rng, dtype, shape, ties):
    """Random values of dtype: few distinct ones when ties, specials for floats."""
    with np.errstate(all="ignore"):
        return _values(rng, dtype, shape, ties)


def _values(rng, dtype, shape, ties):
    n = int(np.prod(shape)) if shape else 1
    kind = np.dtype(dtype).kind
    if kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif kind in "iu":
        info = np.iinfo(dtype)
        if ties:
            lo, hi = max(info.min, -3), min(info.max, 4)
        else:
            lo, hi = info.min, info.max
        v = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64 if kind == "i" else np.uint64)
        v = v.astype(dtype)
    else:
        real = np.float32 if dtype in ("float16", "float32", "complex64") else np.float64
        def part():
            x = (rng.integers(-3, 4, n).astype(real) if ties else
                 rng.standard_normal(n).astype(real) * 100)
            specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], real)
            mask = rng.random(n) < 0.15
            x[mask] = specials[rng.integers(0, len(specials), int(mask.sum()))]
            return x
        v = part() if kind == "f" else part() + 1j * part()
        v = v.astype(dtype)
    return v.reshape(shape)


def random_shape(rng, min_ndim=0, big=False):
    ndim = int(rng.integers(min_ndim, 4))
    if big:
        return (int(rng.integers(1, 300)),) if ndim <= 1 else (3, int(rng.integers(40, 200)))
    return tuple(int(rng.integers(0, 6)) if rng.random() < 0.1 else int(rng.integers(1, 6))
                 for _ in range(ndim))


def pick_layout(rng, shape):
    choices = ["-"]
    if len(shape) >= 2:
        choices += ["T", "rev2"]
    if len(shape) >= 1:
        choices += ["rev1", "step1.2"]
    return choices[int(rng.integers(0, len(choices)))]


def base_for(layout, logical_shape):
    """The shape of a base that the layout turns into logical_shape."""
    shape = list(logical_shape)
    if layout == "T":
        shape = shape[::-1]
    elif layout == "step1.2":
        shape[0] = shape[0] * 2
    return tuple(shape)


class Writer:
    def __init__(self, outdir):
        self.outdir, self.count = outdir, 0

    def case(self, op, layout, base, params, results, extra=None):
        cid = "c%d" % self.count
        self.count += 1
        np.save("%s/%s_in.npy" % (self.outdir, cid), base)
        for name, arr in (extra or {}).items():
            np.save("%s/%s_%s.npy" % (self.outdir, cid, name), arr)
        for k, arr in enumerate(results):
            np.save("%s/%s_out%d.npy" % (self.outdir, cid, k + 1), np.asarray(arr))
        text = ";".join("%s=%s" % kv for kv in params.items()) or "-"
        print(cid, op, layout, text)


def logical_input(rng, dtype, shape, ties):
    layout = pick_layout(rng, shape)
    base = values(rng, dtype, base_for(layout, shape), ties)
    return layout, base, apply_layout(base, layout)


def descending_order(x, axis):
    """Stable descending positions: NaN first, ties in their order."""
    n = x.shape[axis]
    rev = np.flip(x, axis)
    order = n - 1 - np.argsort(rev, axis=axis, kind="stable")
    return np.flip(order, axis)


def main():
    seed, outdir = int(sys.argv[1]), sys.argv[2]
    rng = np.random.default_rng(seed)
    w = Writer(outdir)
    # Long lanes: the radix sort's top-digit split (past 65536 keys) and the
    # vectorised sort of values (past 4096), contiguous and reversed.
    for dtype in ["int16", "uint32", "int64", "float16", "float32", "float64", "complex64"]:
        for ties in (False, True):
            n = int(rng.integers(66000, 90000))
            layout = "rev1" if ties else "-"
            base = values(rng, dtype, (n,), ties)
            x = apply_layout(base, layout)
            desc = bool(rng.random() < 0.5)
            order = descending_order(x, 0) if desc else np.argsort(x, kind="stable")
            w.case("sort", layout, base,
                   {"dim": 1, "descending": str(desc).lower(), "stable": "true"},
                   [np.take(x, order), order + 1])
    # Lanes past a vqsort piece (2^18 32-bit, 2^17 64-bit keys): the values
    # are split by their top digits through the scratch first.
    for dtype in ["int32", "float32", "float64"]:
        for ties in (False, True):
            n = int(rng.integers(270000, 300000))
            base = values(rng, dtype, (n,), ties)
            desc = bool(rng.random() < 0.5)
            order = descending_order(base, 0) if desc else np.argsort(base, kind="stable")
            w.case("sort", "-", base,
                   {"dim": 1, "descending": str(desc).lower(), "stable": "false"},
                   [np.take(base, order), order + 1])
    for dtype in DTYPES:
        for rep in range(6):
            ties = rep % 2 == 1
            # sort / argsort / topk
            shape = random_shape(rng, 1, big=rep >= 4)
            layout, base, x = logical_input(rng, dtype, shape, ties)
            axis = int(rng.integers(0, x.ndim))
            desc = bool(rng.random() < 0.4)
            stable = bool(rng.random() < 0.5)
            order = descending_order(x, axis) if desc else np.argsort(x, axis=axis, kind="stable")
            w.case("sort", layout, base,
                   {"dim": axis + 1, "descending": str(desc).lower(), "stable": str(stable).lower()},
                   [np.take_along_axis(x, order, axis), order + 1])
            n = x.shape[axis]
            k = int(rng.integers(0, n + 1)) if rng.random() < 0.5 else min(n, int(rng.integers(0, 4)))
            largest = bool(rng.random() < 0.7)
            order = descending_order(x, axis) if largest else np.argsort(x, axis=axis, kind="stable")
            order = np.take(order, np.arange(k), axis=axis)
            w.case("topk", layout, base, {"k": k, "dim": axis + 1, "largest": str(largest).lower()},
                   [np.take_along_axis(x, order, axis), order + 1])
            # unique
            shape = random_shape(rng, 0)
            layout, base, x = logical_input(rng, dtype, shape, True)
            u, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
            w.case("unique", layout, base, {}, [u, inv.reshape(-1) + 1, cnt])
            # unique with the first index (a stable sort in NumPy), each NaN
            # one value or its own
            equal_nan = bool(rng.random() < 0.5)
            layout, base, x = logical_input(rng, dtype, random_shape(rng, 0, big=rep >= 4), True)
            u, first, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                           return_counts=True, equal_nan=equal_nan)
            w.case("unique_index", layout, base, {"equal_nan": str(equal_nan).lower()},
                   [u, first + 1, inv.reshape(-1) + 1, cnt])
            # isin: against test values of any dtype and shape (promoted, by value)
            other = DTYPES[int(rng.integers(0, len(DTYPES)))] if rng.random() < 0.6 else dtype
            layout, base, x = logical_input(rng, dtype, random_shape(rng, 0, big=rep >= 4), ties)
            tshape = random_shape(rng, 0, big=rep >= 4)
            t = values(rng, other, tshape, ties or rng.random() < 0.5)
            if rng.random() < 0.5 and x.size and t.size:  # some of x's own values, to be found
                picks = x.reshape(-1)[rng.integers(0, x.size, t.size)]
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", np.ComplexWarning)  # complex picks to reals
                    t = np.where(rng.random(t.shape) < 0.5, picks.reshape(t.shape).astype(other),
                                 t)
            invert = bool(rng.random() < 0.3)
            # (kind="sort": NumPy 1.24's default picks a lookup table for some
            # integer pairs, which fails on uint64 against signed ones)
            w.case("isin", layout, base, {"invert": str(invert).lower()},
                   [np.isin(x, t, invert=invert, kind="sort")], {"val": t})
            # lexsort: 1 to 3 keys of one shape, each of its own dtype; the
            # sort runs along the last dim
            nkeys = int(rng.integers(1, 4))
            shape = random_shape(rng, 1, big=rep >= 4)
            layout = pick_layout(rng, shape)
            kdtypes = [dtype] + [DTYPES[int(rng.integers(0, len(DTYPES)))] if rng.random() < 0.5
                                 else dtype for _ in range(nkeys - 1)]
            kbases = [values(rng, kt, base_for(layout, shape), True) for kt in kdtypes]
            keys = [apply_layout(kb, layout) for kb in kbases]
            order = np.lexsort(keys)
            w.case("lexsort", layout, kbases[0], {"keys": nkeys}, [order + 1],
                   {"k%d" % (k + 1): kb for k, kb in enumerate(kbases)})
            if rep < 2 or len(shape) == 1:  # the sub-arrays of one array as the keys
                stack = values(rng, dtype, (nkeys,) + shape, True)
                w.case("lexsort_rows", "-", stack, {}, [np.lexsort(stack) + 1])
            # searchsorted
            if np.dtype(dtype).kind != "c" or rep < 2:
                layout, base, x = logical_input(rng, dtype, (int(rng.integers(0, 12)),), ties)
                s = np.sort(x)
                v = values(rng, dtype, random_shape(rng, 0), ties)
                side = "right" if rng.random() < 0.5 else "left"
                w.case("searchsorted", "-", s, {"side": side},
                       [np.searchsorted(s, v, side=side) + 1], {"val": v})
            # take, take_along_dim, put_along_dim
            shape = random_shape(rng, 1)
            layout, base, x = logical_input(rng, dtype, shape, ties)
            axis = int(rng.integers(0, x.ndim))
            n = x.shape[axis]
            if n > 0:
                idx = rng.integers(-n, n, random_shape(rng, 0))
                w.case("take", layout, base, {"dim": axis + 1},
                       [np.take(x, idx, axis=axis)], {"idx": np.where(idx >= 0, idx + 1, idx)})
                ishape = list(x.shape)
                ishape[axis] = int(rng.integers(0, 5))
                for d in range(x.ndim):
                    if d != axis and rng.random() < 0.3:
                        ishape[d] = 1
                idx = rng.integers(-n, n, tuple(ishape))
                lua_idx = np.where(idx >= 0, idx + 1, idx)
                w.case("take_along_dim", layout, base, {"dim": axis + 1},
                       [np.take_along_axis(x, idx, axis)], {"idx": lua_idx})
                vals = values(rng, dtype, np.broadcast_shapes(idx.shape, tuple(
                    1 if d == axis else x.shape[d] for d in range(x.ndim))), ties)
                y = x.copy()
                np.put_along_axis(y, idx, vals, axis)
                w.case("put_along_dim", layout, base, {"dim": axis + 1}, [y],
                       {"idx": lua_idx, "val": vals})
            # masks
            shape = random_shape(rng, 1)
            layout, base, x = logical_input(rng, dtype, shape, ties)
            k = int(rng.integers(1, x.ndim + 1))
            m = rng.random(x.shape[:k]) < 0.5
            w.case("mask_read", layout, base, {}, [x[m]], {"mask": m})
            y = x.copy()
            count = int(m.sum())
            vals = values(rng, dtype, (count,) + x.shape[k:], ties)
            y[m] = vals
            w.case("mask_write", layout, base, {}, [y], {"mask": m, "val": vals})
            # argwhere
            layout, base, x = logical_input(rng, dtype, random_shape(rng, 0), True)
            w.case("argwhere", layout, base, {}, [np.argwhere(x) + 1])
            # cumsum / cumprod
            shape = random_shape(rng, 0)
            layout, base, x = logical_input(rng, dtype, shape, ties)
            if x.ndim:
                axis = int(rng.integers(0, x.ndim))
                for fn in ("cumsum", "cumprod"):
                    with np.errstate(all="ignore"):
                        r = getattr(np, fn)(x, axis=axis)
                    w.case(fn, layout, base, {"dim": axis + 1}, [r])
            # diff
            if x.ndim and dtype != "bool":
                axis = int(rng.integers(0, x.ndim))
                nd = int(rng.integers(0, 3))
                with np.errstate(all="ignore"):
                    r = np.diff(x, n=nd, axis=axis)
                w.case("diff", layout, base, {"n": nd, "dim": axis + 1}, [r])
            # bincount, histogram
            if np.dtype(dtype).kind in "biu" and dtype not in ("uint64",):
                x = rng.integers(0, 20, int(rng.integers(0, 50))).astype(dtype)
                minlength = int(rng.integers(0, 25))
                wts = rng.standard_normal(x.shape[0])
                w.case("bincount", "-", x, {"minlength": minlength},
                       [np.bincount(x, minlength=minlength)])
                w.case("bincount_w", "-", x, {"minlength": minlength},
                       [np.bincount(x, weights=wts, minlength=minlength)], {"w": wts})
            if np.dtype(dtype).kind in "iuf":
                # (integers of the whole int64 range overflow NumPy's own bin arithmetic)
                small = ties or np.dtype(dtype).kind in "iu"
                layout, base, x = logical_input(rng, dtype, random_shape(rng, 1), small)
                bins = int(rng.integers(1, 12))
                finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
                if rng.random() < 0.5 and finite.size:
                    lo = float(finite.min()) - 0.5
                    hi = float(finite.max()) + float(rng.random())
                    c, e = np.histogram(x, bins=bins, range=(lo, hi))
                    w.case("histogram", layout, base, {"bins": bins, "lo": repr(lo), "hi": repr(hi)},
                           [c, e])
                elif not (x.dtype.kind == "f" and not np.isfinite(x).all()):
                    wts = rng.standard_normal(x.shape)
                    c, e = np.histogram(x, bins=bins, weights=wts)
                    w.case("histogram_w", layout, base, {"bins": bins}, [c, e], {"w": wts})


if __name__ == "__main__":
    main()
