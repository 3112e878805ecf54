"""bench/linalg_numpy.py: NumPy's side of bench/linalg.lua, alternated with it
case by case (bench/numpy_support.py). The names, operands and calls a round
match bench/linalg.lua's."""
import numpy as np

import numpy_support as ns

P = ns.params(BIG=1024, MID=256, BATCH=10000)
L = np.linalg


def emit(name, f, reps=1):
    ns.case(name, f, reps=reps, warmups=2)


def matrix(batch, n):
    i = np.arange(n).reshape(n, 1)
    j = np.arange(n).reshape(1, n)
    a = ((i + j * 2) % 7) / 7 + np.eye(n) * n
    return np.ascontiguousarray(np.broadcast_to(a, (batch, n, n) if batch else (n, n)))


def spd(batch, n):
    a = matrix(batch, n)
    return np.ascontiguousarray(a + np.swapaxes(a, -1, -2))


B = P["BATCH"]
for n in (3, 4):
    a, b = matrix(B, n), np.ones((B, n))
    emit(f"solve_batch_{n}", lambda a=a, b=b: L.solve(a, b))
    emit(f"inv_batch_{n}", lambda a=a: L.inv(a))
    emit(f"det_batch_{n}", lambda a=a: L.det(a))
s4 = spd(B, 4)
emit("cholesky_batch_4", lambda: L.cholesky(s4))
emit("eigh_batch_4", lambda: L.eigh(s4))

for n in (P["MID"], P["BIG"]):
    a, b, s = matrix(None, n), np.ones(n), spd(None, n)
    reps = 20 if n == P["MID"] else 1
    emit(f"solve_{n}", lambda a=a, b=b: L.solve(a, b), reps)
    emit(f"inv_{n}", lambda a=a: L.inv(a), reps)
    emit(f"det_{n}", lambda a=a: L.det(a), reps)
    emit(f"slogdet_{n}", lambda a=a: L.slogdet(a), reps)
    emit(f"cholesky_{n}", lambda s=s: L.cholesky(s), reps)
    if n == P["MID"]:
        emit(f"eigh_{n}", lambda s=s: L.eigh(s), 4)
        emit(f"svd_{n}", lambda a=a: L.svd(a), 2)
        emit(f"qr_{n}", lambda a=a: L.qr(a), 4)
        emit(f"lstsq_{n}", lambda a=a, b=b: L.lstsq(a, b, rcond=None), 2)
ns.serve()
