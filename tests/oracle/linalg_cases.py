"""tests/oracle/linalg_cases.py: randomised cases of dl.linalg with NumPy 1.24's
numpy.linalg as the oracle, for tests/oracle/linalg_check.lua.

    python3 linalg_cases.py <seed> <dir> [fraction]

writes each case's operands (a base array and a layout that views it) and
NumPy's results as .npy files into <dir> and prints one line per case:

    <id> <op> <layout_a> <layout_b> <params> <outcome>

params are key=value pairs separated by ';' ("-": none); outcome is "ok" (the
results are <dir>/<id>_out<k>.npy, in NumPy's order; lstsq's rank is one of
them, 0-d int64), "LinAlgError" (dlbridge must raise LINALG) or "ValueError"
(shapes NumPy refuses: dlbridge must raise SHAPE).

Over float64, float32, int32, int64, uint8 and bool operands; matrices of 0 to
6 rows and columns, stacks of 0 to 2 dims (extent 0 among them); layouts
transposed, reversed and stepped; singular matrices (solve, inv, det,
slogdet), matrices that are not positive definite (cholesky), repeated
eigenvalues (small integers). eigh's and svd's vectors are unique only up
to the sign of each vector (and not at all where values repeat): the checker
compares them up to sign per vector when the values are apart (param
unique=1), and otherwise checks that they rebuild the matrix.
"""
import sys

import numpy as np
from oracle_layouts import based, pick_layout

DTYPES = ["float64", "float32", "int32", "int64", "uint8", "bool"]
OPS = ["solve", "inv", "det", "slogdet", "cholesky", "eigh", "svd", "qr", "lstsq"]


def values(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "uint8":
        return rng.integers(0, 6, shape).astype(np.uint8)
    if dtype in ("int32", "int64"):
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def batch_shape(rng):
    nb = rng.choice([0, 0, 1, 1, 2])
    shape = tuple(int(rng.choice([0, 1, 2, 3], p=[0.08, 0.22, 0.4, 0.3])) for _ in range(nb))
    return shape


def matrix(rng, dtype, batch, m, n):
    return values(rng, dtype, batch + (m, n))


def square_for(rng, op, dtype, batch, n):
    a = matrix(rng, dtype, batch, n, n)
    if op == "cholesky" and rng.random() < 0.8:
        f = a.astype(np.float64)
        a = (f @ np.swapaxes(f, -1, -2) + n * np.eye(n)).astype(dtype if dtype != "bool"
                                                                 else "float64")
    elif op == "eigh":
        f = a.astype(np.float64)
        sym = f + np.swapaxes(f, -1, -2)
        a = sym.astype(dtype) if dtype not in ("bool", "uint8") else sym.astype("int64")
    elif op in ("solve", "inv", "det", "slogdet") and n > 1 and rng.random() < 0.15:
        a = a.copy()
        a[..., -1, :] = a[..., 0, :]  # singular: two equal rows
    return a


def apart(values_, scale):
    """Whether sorted values (last axis) are all apart: their vectors unique up to sign."""
    if values_.shape[-1] < 2:
        return True
    gaps = np.abs(np.diff(np.sort(values_, axis=-1), axis=-1))
    return bool(np.all(gaps > 1e-6 * (1 + scale)))


class Writer:
    def __init__(self, outdir):
        self.outdir = outdir
        self.count = 0

    def case(self, op, a, b, params, rng, run):
        cid = "c%d" % self.count
        self.count += 1
        la = pick_layout(rng, a)
        np.save("%s/%s_a.npy" % (self.outdir, cid), based(a, la))
        lb = "-"
        if b is not None:
            lb = pick_layout(rng, b)
            np.save("%s/%s_b.npy" % (self.outdir, cid), based(b, lb))
        try:
            results = run()
        except np.linalg.LinAlgError:
            print(cid, op, la, lb, params or "-", "LinAlgError")
            return
        except ValueError:  # shapes NumPy refuses: dlbridge raises SHAPE
            print(cid, op, la, lb, params or "-", "ValueError")
            return
        for k, r in enumerate(results):
            np.save("%s/%s_out%d.npy" % (self.outdir, cid, k), np.asarray(r))
        print(cid, op, la, lb, params or "-", "ok")


def one_case(w, rng, op, dtype):
    L = np.linalg
    batch = batch_shape(rng)
    n = int(rng.integers(0, 7)) if rng.random() < 0.9 else 0
    m = int(rng.integers(0, 7))
    if op in ("inv", "det", "slogdet", "cholesky"):
        a = square_for(rng, op, dtype, batch, n)
        fn = {"inv": L.inv, "det": L.det, "slogdet": L.slogdet, "cholesky": L.cholesky}[op]
        w.case(op, a, None, None, rng, lambda: list(fn(a)) if op == "slogdet" else [fn(a)])
    elif op == "solve":
        a = square_for(rng, op, dtype, batch, n)
        bdt = DTYPES[rng.integers(len(DTYPES))] if rng.random() < 0.3 else dtype
        sub = batch[int(rng.integers(0, len(batch) + 1)):]  # b broadcasts a's stack dims
        if rng.random() < 0.5:
            b = values(rng, bdt, batch + (n,))  # b.ndim == a.ndim - 1: vectors
        else:
            b = values(rng, bdt, sub + (n, int(rng.integers(0, 4))))
        w.case(op, a, b, None, rng, lambda: [L.solve(a, b)])
    elif op == "eigh":
        a = square_for(rng, op, dtype, batch, n)
        uplo = "U" if rng.random() < 0.5 else "L"
        if rng.random() < 0.3:  # eigh reads one triangle: the other may hold anything
            a = a.copy()
            junk = values(rng, a.dtype.name, a.shape)
            tri = np.triu if uplo == "L" else np.tril
            a = a - tri(a, 1 if uplo == "L" else -1) + tri(junk, 1 if uplo == "L" else -1)
        res = None
        try:
            res = L.eigh(a, UPLO=uplo)
        except np.linalg.LinAlgError:
            pass
        scale = float(np.max(np.abs(res[0]))) if res is not None and res[0].size else 0.0
        unique = int(res is None or apart(res[0], scale))
        w.case(op, a, None, "UPLO=%s;unique=%d" % (uplo, unique), rng,
               lambda: list(L.eigh(a, UPLO=uplo)))
    elif op == "svd":
        a = matrix(rng, dtype, batch, m, n)
        full = int(rng.random() < 0.5)
        uv = int(rng.random() < 0.8)
        s = L.svd(a, compute_uv=False)
        scale = float(np.max(s)) if s.size else 0.0
        unique = int(apart(s, scale) and (not s.size or np.min(s) > 1e-6 * (1 + scale)) and
                     (not full or m == n))
        params = "full_matrices=%d;compute_uv=%d;unique=%d" % (full, uv, unique)
        w.case(op, a, None, params, rng,
               lambda: list(L.svd(a, full_matrices=bool(full), compute_uv=bool(uv)))
               if uv else [L.svd(a, compute_uv=False)])
    elif op == "qr":
        a = matrix(rng, dtype, batch, m, n)
        mode = ["reduced", "complete", "r"][int(rng.integers(3))]
        w.case(op, a, None, "mode=" + mode, rng,
               lambda: list(L.qr(a, mode=mode)) if mode != "r" else [L.qr(a, mode="r")])
    else:  # lstsq: one matrix (NumPy 1.24 has no stacks)
        a = matrix(rng, dtype, (), m, n)
        if m > 1 and n > 1 and rng.random() < 0.2:
            a[:, -1] = a[:, 0]  # rank deficient
        b = values(rng, dtype, (m,) if rng.random() < 0.5 else (m, int(rng.integers(0, 4))))
        rcond = None if rng.random() < 0.7 else float(rng.choice([-1.0, 1e-3, 0.5]))
        params = "rcond=%s" % ("-" if rcond is None else repr(rcond))

        def run():
            x, res, rank, s = L.lstsq(a, b, rcond=rcond)
            return [x, res, np.int64(rank), s]
        w.case(op, a, b, params, rng, run)


def main():
    seed = int(sys.argv[1])
    outdir = sys.argv[2]
    fraction = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    rng = np.random.default_rng(seed)
    w = Writer(outdir)
    per = max(1, int(round(6 * fraction)))
    with np.errstate(all="ignore"):
        for op in OPS:
            for dtype in DTYPES:
                for _ in range(per):
                    one_case(w, rng, op, dtype)


if __name__ == "__main__":
    main()
