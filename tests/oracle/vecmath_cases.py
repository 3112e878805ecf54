"""tests/oracle/vecmath_cases.py: randomised cases of dl.cross, dl.outer,
dl.norm, dl.einsum and dl.interp with NumPy 1.24 as the oracle, for
tests/oracle/vecmath_check.lua.

    python3 vecmath_cases.py <seed> <dir> [fraction]

writes each case's operands (base arrays and the layouts that view them) and
NumPy's result as .npy files into <dir> and prints one line per case:

    <id> <op> <layouts> <params> <outcome>

layouts is one per operand, separated by ',' ("-", "T", "rev1", "step1");
params are key=value pairs separated by ';' ("-": none); outcome is "ok"
(the result is <dir>/<id>_out.npy) or the dlbridge error code NumPy's
refusal stands for (SHAPE, VALUE, DTYPE, or LINALG: an SVD of NaN or inf).

Operands: float64, float32, float16, int32, int64, uint8, int8, bool and
complex128 (norm, einsum), with NaN and +-inf sprinkled into float ones,
empty and 0-d shapes where the function takes them, broadcasting leading
dims (cross) and size-1 letters (einsum); einsum runs every listed form plus
random valid subscripts of one to three operands (diagonals, implicit
output, upper-case letters) and subscripts NumPy refuses.
"""
import sys

import numpy as np
from oracle_layouts import based, pick_layout



def values(rng, dtype, shape, specials=True, infinities=True):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "u":
        return rng.integers(0, 6, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if specials and x.size and rng.random() < 0.2:
        flat = x.reshape(-1)
        for _ in range(1 + rng.integers(2)):
            flat[rng.integers(flat.size)] = rng.choice([np.nan, np.inf, -np.inf]
                                                       if infinities else [np.nan])
    return x


class Writer:
    def __init__(self, out_dir):
        self.dir = out_dir
        self.count = 0

    def case(self, op, operands, params, call, rng):
        cid = "c%d" % self.count
        self.count += 1
        layouts = []
        for k, x in enumerate(operands):
            layout = pick_layout(rng, x)
            layouts.append(layout)
            np.save("%s/%s_a%d.npy" % (self.dir, cid, k), based(x, layout))
        outcome = "ok"
        try:
            with np.errstate(all="ignore"):
                r = call(*operands)
            np.save("%s/%s_out.npy" % (self.dir, cid), np.asarray(r))
        except (ValueError, TypeError, np.AxisError, np.linalg.LinAlgError) as e:
            outcome = code_of(op, e)
        text = ";".join("%s=%s" % kv for kv in params.items()) or "-"
        print(cid, op, ",".join(layouts), text, outcome)


def code_of(op, e):
    """The dlbridge error code NumPy's exception stands for."""
    msg = str(e)
    if isinstance(e, np.linalg.LinAlgError):
        return "LINALG"
    if isinstance(e, TypeError):
        return "DTYPE"
    if isinstance(e, np.AxisError):
        return "SHAPE"
    if op == "cross":
        return "SHAPE"
    if op == "einsum":
        for part in ("too many subscripts", "more dimensions than subscripts", "don't match",
                     "could not be broadcast"):
            if part in msg:
                return "SHAPE"
        return "VALUE"
    if op == "interp":
        if "empty" in msg or "non-zero" in msg:
            return "VALUE"
        return "SHAPE"
    return "VALUE"


# --- cross and outer ---------------------------------------------------------

CROSS_DTYPES = ["float64", "float32", "float16", "int32", "int64", "uint8", "int8", "bool"]


def lead_pair(rng):
    nd = rng.choice([0, 1, 1, 2])
    lead = [int(rng.choice([0, 1, 2, 3], p=[0.1, 0.3, 0.3, 0.3])) for _ in range(nd)]
    la, lb = list(lead), list(lead)
    for d in range(nd):  # broadcast: some extents 1 on one side, dims dropped
        if rng.random() < 0.25:
            la[d] = 1
        elif rng.random() < 0.25:
            lb[d] = 1
    if nd and rng.random() < 0.3:
        lb = lb[1:]
    return la, lb


def cross_cases(w, rng, n):
    for _ in range(n):
        ta, tb = rng.choice(CROSS_DTYPES), rng.choice(CROSS_DTYPES)
        la, lb = lead_pair(rng)
        ea, eb = int(rng.choice([2, 3, 3])), int(rng.choice([2, 3, 3]))
        if rng.random() < 0.05:
            ea = int(rng.choice([1, 4]))
        a = values(rng, ta, tuple(la) + (ea,))
        b = values(rng, tb, tuple(lb) + (eb,))
        if rng.random() < 0.03:
            a = values(rng, ta, ())
        w.case("cross", [a, b], {}, np.cross, rng)


def outer_cases(w, rng, n):
    for _ in range(n):
        ta, tb = rng.choice(CROSS_DTYPES), rng.choice(CROSS_DTYPES)
        sa = tuple(int(x) for x in rng.integers(0, 4, rng.integers(0, 3)))
        sb = tuple(int(x) for x in rng.integers(0, 4, rng.integers(0, 3)))
        w.case("outer", [values(rng, ta, sa), values(rng, tb, sb)], {}, np.outer, rng)


# --- norm ------------------------------------------------------------------------

NORM_DTYPES = ["float64", "float32", "float16", "int32", "uint8", "bool", "complex128"]
ORDS = [None, 1, -1, 2, -2, np.inf, -np.inf, 0, 3, 0.5, -1.5, "fro", "nuc"]


def ord_text(o):
    if o is None:
        return "None"
    if isinstance(o, str):
        return o
    if o == np.inf:
        return "inf"
    if o == -np.inf:
        return "-inf"
    return repr(float(o))


def norm_of(x, o, axis, keep):
    """np.linalg.norm, but complex matrices' SVD norms refused (dl.linalg has no
    complex SVD: dl.norm says DTYPE), and SVD norms of NaN or inf refused
    (LINALG): NumPy raises LinAlgError for NaN, and for inf returns NaN or
    raises ValueError by the path LAPACK takes (the matrix's layout), where
    dl.norm refuses both alike."""
    matrix = isinstance(axis, tuple) or (axis is None and x.ndim == 2 and o is not None)
    if matrix and (o in (2, -2) or o == "nuc"):
        if x.dtype.kind == "c":
            raise TypeError("complex SVD")
        if x.dtype != np.float16 and not np.isfinite(x).all():  # float16: NumPy's TypeError
            raise np.linalg.LinAlgError("NaN or inf in an SVD")
    return np.linalg.norm(x, o, axis, keep)


def norm_cases(w, rng, n):
    for _ in range(n):
        t = rng.choice(NORM_DTYPES)
        nd = int(rng.choice([0, 1, 1, 2, 2, 3]))
        shape = tuple(int(rng.choice([0, 1, 2, 3, 4], p=[0.05, 0.15, 0.3, 0.3, 0.2]))
                      for _ in range(nd))
        a = values(rng, t, shape, specials=rng.random() < 0.5)
        o = ORDS[rng.integers(len(ORDS))]
        axis = None
        r = rng.random()
        if nd >= 1 and r < 0.4:
            axis = int(rng.integers(-nd, nd))
        elif nd >= 2 and r < 0.8:
            p = rng.permutation(nd)[:2]
            axis = (int(p[0]), int(p[1] - (nd if rng.random() < 0.3 else 0)))
        keep = bool(rng.random() < 0.3)
        params = {"ord": ord_text(o), "keepdims": int(keep)}
        if axis is not None:
            dims = axis if isinstance(axis, tuple) else (axis,)
            params["dim"] = ",".join(str(d + 1 if d >= 0 else d) for d in dims)
        w.case("norm", [a], params,
               lambda x, o=o, axis=axis, keep=keep: norm_of(x, o, axis, keep), rng)


# --- einsum ----------------------------------------------------------------------

EINSUM_DTYPES = ["float64", "float32", "int32", "int64", "int8", "bool", "complex128", "float16"]
FORMS = [
    ("ij,jk->ik", [("i", "j"), ("j", "k")]),
    ("bij,bjk->bik", [("b", "i", "j"), ("b", "j", "k")]),
    ("i,i->", [("i",), ("i",)]),
    ("ij->ji", [("i", "j")]),
    ("ij->", [("i", "j")]),
    ("ii->i", [("i", "i")]),
    ("bi,bi->b", [("b", "i"), ("b", "i")]),
    ("ij,jk", [("i", "j"), ("j", "k")]),
    ("ij,kj", [("i", "j"), ("k", "j")]),
    ("ii", [("i", "i")]),
    ("i,j->ij", [("i",), ("j",)]),
]


def operands_for(rng, terms, dtypes, extents=None, broadcast=True):
    extents = dict(extents or {})
    ops = []
    for term, t in zip(terms, dtypes):
        shape = []
        for c in term:
            if c not in extents:
                extents[c] = int(rng.choice([0, 1, 2, 3, 4], p=[0.06, 0.14, 0.3, 0.3, 0.2]))
            e = extents[c]
            if broadcast and e > 1 and len(terms) > 1 and rng.random() < 0.08:
                e = 1
            shape.append(e)
        # NaN only: einsum groups its sums otherwise than NumPy, so where
        # infinities of both signs meet, inf - inf may fall elsewhere
        ops.append(values(rng, t, tuple(shape), rng.random() < 0.3, infinities=False))
    return ops


def einsum_case(w, rng, sub, terms):
    n = len(terms)
    dtypes = [rng.choice(EINSUM_DTYPES) for _ in range(n)]
    if rng.random() < 0.5:
        dtypes = [dtypes[0]] * n
    ops = operands_for(rng, terms, dtypes)
    w.case("einsum", ops, {"sub": sub}, lambda *xs, s=sub: np.einsum(s, *xs), rng)


def random_subscripts(rng):
    pool = "abcdB"
    n = int(rng.choice([1, 2, 2, 3]))
    terms = []
    for _ in range(n):
        nd = int(rng.integers(0, 4))
        terms.append(tuple(pool[rng.integers(len(pool))] for _ in range(nd)))
    used = sorted(set(c for t in terms for c in t))
    if rng.random() < 0.3:
        sub = ",".join("".join(t) for t in terms)
    else:
        out = [c for c in used if rng.random() < 0.5]
        rng.shuffle(out)
        sub = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    return sub, terms


ELLIPSIS_FORMS = ["...i,...i->...", "...ij,...jk->...ik", "...ij->...ji", "...ii->...i", "i...->...",
                  "...i", "...ij,...jk", "ij...,jk...->ik...", "...,...", "b...i,i->b..."]


def ellipsis_case(w, rng, sub):
    """sub with every '...' standing for a broadcast of one random lead shape."""
    lead = [int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3)))]
    terms = sub.split("->")[0].split(",")
    extents, ops = {}, []
    dtype = rng.choice(EINSUM_DTYPES)
    for term in terms:
        mine = list(lead)
        if mine and rng.random() < 0.3:
            mine = mine[int(rng.integers(1, len(mine) + 1)):]  # fewer dims: right-aligned
        mine = [1 if rng.random() < 0.2 else e for e in mine]
        shape = []
        before, _, after = term.partition("...")
        for c in before:
            extents.setdefault(c, int(rng.integers(0, 4)))
            shape.append(extents[c])
        if "..." in term:
            shape.extend(mine)
        for c in after:
            extents.setdefault(c, int(rng.integers(0, 4)))
            shape.append(extents[c])
        ops.append(values(rng, dtype, tuple(shape), rng.random() < 0.3, infinities=False))
    w.case("einsum", ops, {"sub": sub}, lambda *xs, s=sub: np.einsum(s, *xs), rng)


BAD = [
    ("...i->i", [(2, 3)]),
    ("..i", [(2, 3)]),
    ("......", [(2, 3)]),
    ("i.", [(2, 3)]),
    ("ij,jk->ii", [(2, 3), (3, 2)]),
    ("ij,jk->l", [(2, 3), (3, 2)]),
    ("i1", [(2, 2)]),
    ("ij", [(2,)]),
    ("i", [(2, 2)]),
    ("ij,jk", [(2, 2), (3, 4)]),
    ("ii", [(2, 3)]),
    ("i,j", [(2,)]),
    ("i", [(2,), (2,)]),
    ("i->i->", [(2,)]),
]


SCALAR_VALUES = {"i": [0, 1, -1, 100, 127, 128, 200, 255, 256, -129, 300, 40000, 70000, -70000,
                        2 ** 31, 2 ** 40, -(2 ** 40)],
                  "u": [0, 1, 127, 128, 255, 256, 40000, 70000, 2 ** 40, 2 ** 63 + 5],
                  "f": [0.5, -2.0, 1e4, 7e4, -7e4, 1e38, 3.5e38, 1e300, np.nan, np.inf],
                  "c": [1 + 2j, 1e39 + 0j, complex(np.nan, 0.0)]}
SCALAR_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128", "bool"]


def scalar_of(rng, t):
    """A 0-d array of dtype t holding a value of its range (NumPy's min_scalar_type cases)."""
    dt = np.dtype(t)
    if dt == np.bool_:
        return np.array(bool(rng.integers(2)))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = [v for v in SCALAR_VALUES["i"] + SCALAR_VALUES["u"] if info.min <= v <= info.max]
        return np.array(pool[rng.integers(len(pool))], dt)
    pool = SCALAR_VALUES["f"] + (SCALAR_VALUES["c"] if dt.kind == "c" else [])
    with np.errstate(all="ignore"):
        return np.array(pool[rng.integers(len(pool))]).astype(dt)


def promotion_cases(w, rng, n):
    """0-d operands beside arrays: the dtype np.einsum's iterator finds (the 0-d
    values first, by NumPy 1.24's value-based promotion, "small" unsigned values
    as signed, then the arrays' dtypes), and its refusal of an array that
    cannot be cast safely to it."""
    fixed = [[np.array(1, np.uint8), np.arange(3, dtype=np.uint16), np.arange(3, dtype=np.int16)],
             [np.arange(3, dtype=np.uint16), np.array(1, np.int8), np.arange(3, dtype=np.int16)],
             [np.array(True), np.ones((3,), np.int8), np.array(1, np.int32)]]
    for ops in fixed:  # refused (uint16 to int16), refused, int16
        sub = ",".join("i" if o.ndim else "" for o in ops) + "->i"
        w.case("einsum", ops, {"sub": sub}, lambda *xs, s=sub: np.einsum(s, *xs), rng)
    for _ in range(n):
        k = int(rng.integers(1, 3))
        terms = ["i"] + [""] * k
        ops = [values(rng, rng.choice(SCALAR_DTYPES), (int(rng.integers(1, 4)),), specials=False)]
        ops += [scalar_of(rng, rng.choice(SCALAR_DTYPES)) for _ in range(k)]
        if rng.random() < 0.3:  # no 0-d operand: NumPy's DType sequence, not a left fold
            ops = [ops[0]] + [o.reshape(1) for o in ops[1:]]
            terms = ["i"] * (k + 1)
        order = rng.permutation(k + 1)
        terms = [terms[j] for j in order]
        ops = [ops[j] for j in order]
        sub = ",".join(terms) + "->i"
        w.case("einsum", ops, {"sub": sub}, lambda *xs, s=sub: np.einsum(s, *xs), rng)


def einsum_cases(w, rng, n):
    for sub, terms in FORMS:
        for _ in range(max(1, n // 40)):
            einsum_case(w, rng, sub, terms)
    for _ in range(n):
        sub, terms = random_subscripts(rng)
        einsum_case(w, rng, sub, terms)
    for sub in ELLIPSIS_FORMS:
        for _ in range(max(1, n // 40)):
            ellipsis_case(w, rng, sub)
    promotion_cases(w, rng, max(1, n // 4))
    for sub, shapes in BAD:
        ops = [values(rng, "float64", s) for s in shapes]
        w.case("einsum", ops, {"sub": sub}, lambda *xs, s=sub: np.einsum(s, *xs), rng)


# --- interp ----------------------------------------------------------------------

INTERP_DTYPES = ["float64", "float32", "int32", "bool"]


def interp_cases(w, rng, n):
    for _ in range(n):
        m = int(rng.choice([1, 2, 3, 5, 8, 20]))
        tx, tp = rng.choice(INTERP_DTYPES), rng.choice(["float64", "float32", "int32"])
        xp = np.sort(rng.integers(-10, 10, m) if rng.random() < 0.3
                     else rng.standard_normal(m) * 4).astype(tp)
        period = None
        if rng.random() < 0.25:
            period = float(rng.choice([1.0, 2.5, -3.0, 7.0]))
            xp = (np.sort(rng.choice(np.arange(40), m, replace=False)) * abs(period) / 40.0)
        fp = values(rng, rng.choice(["float64", "float32", "int32"]), (m,), specials=False)
        if fp.dtype.kind == "f" and rng.random() < 0.1:
            fp[rng.integers(m)] = rng.choice([np.nan, np.inf])
        nd = int(rng.choice([0, 1, 1, 2]))
        shape = tuple(int(rng.choice([0, 1, 3, 7])) for _ in range(nd))
        x = values(rng, tx, shape)
        if x.dtype.kind == "f" and x.size:
            flat = x.reshape(-1)
            flat[rng.integers(flat.size)] = xp[rng.integers(m)]  # exactly on a knot
            if rng.random() < 0.3:
                flat[rng.integers(flat.size)] = np.nan
            x = flat.reshape(shape) * 4
        params = {}
        left = right = None
        if rng.random() < 0.3:
            left = float(rng.choice([-1.5, 0.0, np.nan]))
            params["left"] = repr(left)
        if rng.random() < 0.3:
            right = float(rng.choice([2.5, -7.0]))
            params["right"] = repr(right)
        if period is not None:
            params["period"] = repr(period)
        w.case("interp", [x, xp, fp], params,
               lambda x, xp, fp, l=left, r=right, p=period: np.interp(x, xp, fp, l, r, p), rng)
    # refusals
    bad = [
        ([np.arange(3.0), np.zeros(0), np.zeros(0)], {}),
        ([np.arange(3.0), np.arange(3.0), np.arange(4.0)], {}),
        ([np.arange(3.0), np.ones((2, 2)), np.ones((2, 2))], {}),
        ([np.arange(3.0), np.arange(3.0), np.arange(3.0)], {"period": 0.0}),
    ]
    for ops, params in bad:
        p = params.get("period")
        w.case("interp", ops, {k: repr(v) for k, v in params.items()},
               lambda x, xp, fp, p=p: np.interp(x, xp, fp, period=p), rng)


def main():
    seed = int(sys.argv[1])
    out_dir = sys.argv[2]
    fraction = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    rng = np.random.default_rng(seed)
    w = Writer(out_dir)

    def count(k):
        return max(1, int(k * fraction))

    cross_cases(w, rng, count(60))
    outer_cases(w, rng, count(25))
    norm_cases(w, rng, count(160))
    einsum_cases(w, rng, count(160))
    interp_cases(w, rng, count(60))


if __name__ == "__main__":
    main()
