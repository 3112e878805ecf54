"""tests/oracle/order_cases.py: randomised cases of the memory order of
element-wise results (NumPy's order 'K') for tests/oracle/order_check.lua.

Each case views one to three arange bases (permuted dims, every other
element, reversed dims, extent-1 dims that broadcast, fewer leading dims),
runs an element-wise operation over them in NumPy 1.24 and writes the
result's strides in elements, one line a case:

    <id> <op> <view> <view> <view> <strides>

- op: add, multiply, sqrt, greater, where (the views it takes, the rest "-");
- view: "<base shape>/<permutation>/<steps>" (1-based dims, "." joined;
  shape "x" joined, "-" for 0-d): base = arange(prod(shape)) reshaped,
  permuted (Lua's a:permute), then each dim sliced with its step (2, -1,
  -2 or 1), as a:slice(d, nil, nil, step); where's first view is bool
  (base % 2 == 0);
- strides: the result's, "." joined (an extent-1 dim's stride means
  nothing: "*").
"""
import sys

import numpy as np

seed, fraction = int(sys.argv[1]), float(sys.argv[3])
rng = np.random.default_rng(seed)
OPS = {"add": 2, "multiply": 2, "sqrt": 1, "greater": 2, "where": 3}


def view_of(shape, boolean):
    """An operand that broadcasts to shape, and its token."""
    nd = len(shape)
    if nd > 0 and rng.random() < 0.25:
        nd = int(rng.integers(0, nd))
    vshape = [1 if rng.random() < 0.2 else e for e in shape[len(shape) - nd:]]
    perm = [int(p) for p in rng.permutation(nd)]
    steps = [int(rng.choice([1, 1, 2, -1, -2])) for _ in range(nd)]
    base_shape = [0] * nd
    for i in range(nd):  # view dim i is base dim perm[i], stepped
        base_shape[perm[i]] = vshape[i] * abs(steps[i])
    base = np.arange(int(np.prod(base_shape)), dtype=np.float64).reshape(base_shape)
    if boolean:
        base = base % 2 == 0
    view = base.transpose(perm)[tuple(slice(None, None, s) for s in steps)]
    assert list(view.shape) == vshape
    text = lambda xs: ".".join(str(x) for x in xs) or "-"
    token = "%s/%s/%s" % ("x".join(str(e) for e in base_shape) or "-",
                          text(p + 1 for p in perm), text(steps))
    return view, token


def run(op, views):
    if op == "where":
        return np.where(*views)
    if op == "greater":
        return np.greater(*views)
    return getattr(np, op)(*views)


count = max(1, int(300 * fraction))
for case in range(count):
    op = list(OPS)[case % len(OPS)]
    ndim = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(ndim)]
    pairs = [view_of(shape, op == "where" and k == 0) for k in range(OPS[op])]
    r = run(op, [v for v, _ in pairs])
    if r.ndim != ndim:  # every operand broadcast away a dim: the shape is smaller
        continue
    strides = ".".join("*" if e == 1 else str(s // r.itemsize) for e, s in zip(r.shape, r.strides))
    tokens = [t for _, t in pairs] + ["-"] * (3 - len(pairs))
    print("c%d %s %s %s %s %s" % (case, op, tokens[0], tokens[1], tokens[2], strides))
