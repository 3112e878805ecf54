"""tests/oracle/compute_cases.py: randomised cases of dlbridge's compute
operations with NumPy as the oracle, for tests/oracle/compute_check.lua.

Element-wise: every operation meets every dtype (every pair for binary
operations, and Lua scalars on either side), broadcast patterns ((3,1)+(1,4),
(5,)+(2,5), 0-d + n-d, size 0), layouts (contiguous, transposed, reversed,
stepped, offset, expanded), sizes below and above the 1024-element chunk of
the buffered walk, the three call forms (dl.f, a:f, operators), and `out`
arrays (new, of another dtype, an input itself, read-only, a shifted view of
an input's memory). Then, when dlbridge has them: reductions (every op x
dtype, dims / keepdims / dtype / ddof, empty ones, past the 8192-element
runs), the nan-reductions (nansum & co. over NaNs at densities 0, 30% and
100% of a slice, and infinities), matmul and dot (1-D, 2-D, batched with broadcasting, K = 0, dtype),
concat and stack (mixed dtypes and layouts, negative dims).

Debian's NumPy is 1.24; dlbridge follows NumPy 2 (NEP 50). So the expected
value comes from NumPy's loops on operands already converted to the dtype
dlbridge resolves (the NEP 50 dtype, computed here), which NumPy 1.24 runs
as NumPy 2 does. Where dlbridge deliberately differs from NumPy the
reference states dlbridge's documented rule: each such place is marked
"DIFF:". bfloat16 (not in NumPy) lives in float32 carriers, rounded here.
Transcendental functions and float reductions/products compare within
tolerances (see transcendental_cmp and bound_for); the rest exactly.

One case per line, fields separated by single spaces:

    <id> <op> <form> <nbases> (<dtype> <shape> <hex>)*nbases
         <nargs> <arg>*nargs <out> <known> <expect>

- form: "fn" (dl.op(args...)), "m<name>" (args[1]:name(rest...)), "op<sym>"
  (a Lua operator: + - * / // % ^ & | ~ << >>, neg, bnot);
- shape: "2x3", "-" for 0-d; hex: the base's bytes, C order ("-": none);
- arg: "a<base>:<layout>" (a view of a base), "si:<int>", "sf:<hex float>",
  "sb:true|false", "sc:<re>,<im>" (Lua scalars), "sn" (nil),
  "o:<key>=<value>;..." (an options table; "L1.-1" is the list {1, -1}),
  "l:<a...>|<a...>" (a Lua list of views);
- layout: "-" or ops joined by "+", applied in order: "T" (a:transpose()),
  "rev<d>", "step<d>.<k>" (every k-th), "nstep<d>.<k>" (every k-th from the
  end), "off<d>" (without the first), "trim<d>" (without the last),
  "exp<shape>" (a:expand(shape)); dims 1-based;
- out: "-", "o<base>:<layout>" (a view of a base), "i<k>" (args[k] itself),
  passed as the options' out (a table of its own when there is none);
- known: "-", or the tag of a reported dlbridge bug the case can meet;
- expect: "E:<CODE>" (raises a dlbridge.Error with that code),
  "R:<dtype>:<shape>:<cmp>:<hex>" (the result array, or, with an out, the
  out's base afterwards) or "V:<dtype>:<cmp>:<hex>" (a Lua value, as a
  reduction to 0-d returns); cmp "x" exact (NaN matches any NaN), "s" exact
  but -0.0 == 0.0, "u<n>" within n ulp, "n<n>" (float32 results in a float64
  or complex128 out) within n ulp of the float32s the out holds, "r<n>"
  complex within n eps of |want| per part, "b" within the per-element
  float64 bounds that follow the hex (":<bounds hex>").

Usage: /usr/bin/python3 compute_cases.py [seed] [fraction] [features]
  fraction (default 1): how much of the (op, dtype) grid to run: 2 runs each
  point twice, 0.5 half of them at random;
  features: comma-separated groups dlbridge has beyond element-wise ones
  (sum, nansum, matmul, concat, stack: see the cases_* functions), "-" for none.
"""
import math
import os
import sys
import warnings

import numpy as np

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 1
FRACTION = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
FEATURES = set(sys.argv[3].split(",")) if len(sys.argv) > 3 and sys.argv[3] != "-" else set()
rng = np.random.default_rng(SEED)
warnings.simplefilter("ignore")
np.seterr(all="ignore")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
FLOATS = {"float16", "bfloat16", "float32", "float64"}
COMPLEX = {"complex64", "complex128"}
KIND_RANK = {"b": 0, "u": 1, "i": 2, "f": 3, "c": 4}


def pick(items):
    return items[int(rng.integers(0, len(items)))]


def kind(dt):
    if dt == "bool":
        return "b"
    if dt in INTS:
        return "u" if dt.startswith("u") else "i"
    return "f" if dt in FLOATS else "c"


def carrier(dt):
    """The NumPy dtype holding values of dt: bfloat16 values live in float32."""
    return np.dtype("float32" if dt == "bfloat16" else dt)


def bits(dt):
    return 1 if dt == "bool" else carrier(dt).itemsize * 8 if dt != "bfloat16" else 16


# --- bfloat16 (not in NumPy) ------------------------------------------------

def f32_to_bf16_bits(x):
    """float32 -> bfloat16 bit patterns, round to nearest even, NaN kept quiet."""
    u = np.array(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    sixteen, one = np.uint64(16), np.uint64(1)
    rounded = ((u + np.uint64(0x7FFF) + ((u >> sixteen) & one)) >> sixteen).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> sixteen) | np.uint64(0x40)).astype(np.uint16), rounded)


def bf16_bits_to_f32(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_bf16(x):
    """Any real values -> the nearest bfloat16 values (one rounding), as float32.
    From float64 through float32 rounded to odd, which makes the second
    rounding exact."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        x = x.real
    x64 = x.astype(np.float64)
    f = x64.astype(np.float32)
    inexact = np.isfinite(x64) & (f.astype(np.float64) != x64) & np.isfinite(f)
    fb = f.view(np.uint32).copy()
    # truncate towards zero where rounding went away from it, then make odd
    away = inexact & (np.abs(f.astype(np.float64)) > np.abs(x64))
    fb[away] -= np.uint32(1)
    fb[inexact] |= np.uint32(1)
    return bf16_bits_to_f32(f32_to_bf16_bits(fb.view(np.float32)))


def cast(x, dt):
    """NumPy's astype into dt's carrier (bfloat16: rounded once)."""
    x = np.asarray(x)
    if dt == "bfloat16":
        if x.dtype.kind in "biu":
            x = x.astype(np.float64)
        return round_bf16(x)
    if x.dtype.kind == "c" and carrier(dt).kind not in "c":
        x = x.real
    return x.astype(carrier(dt))


def to_bytes(x, dt):
    x = np.ascontiguousarray(x)
    if dt == "bfloat16":
        return f32_to_bf16_bits(x).tobytes()
    return x.astype(carrier(dt)).tobytes()


# --- promotion (NEP 50) ----------------------------------------------------

def promote(a, b):
    """np.promote_types, with bfloat16 as src/compute/types.c places it:
    bool/int8/uint8 -> bfloat16; float16, int16, uint16, float32 -> float32."""
    if "bfloat16" not in (a, b):
        return np.promote_types(a, b).name
    other = b if a == "bfloat16" else a
    if other in ("bool", "int8", "uint8", "bfloat16"):
        return "bfloat16"
    if other in ("int16", "uint16", "float16", "float32"):
        return "float32"
    if other in ("int32", "uint32", "int64", "uint64", "float64"):
        return "float64"
    return other


def can_cast_same_kind(a, b):
    if "bfloat16" not in (a, b):
        return bool(np.can_cast(a, b, "same_kind"))
    ka, kb = kind(a), kind(b)
    if promote(a, b) == b:
        return True
    return KIND_RANK[kb] >= KIND_RANK[ka]


SCALAR_DTYPE = {"b": "bool", "i": "int64", "f": "float64", "c": "complex128"}


def weak(t, s):
    """The dtype a weak Lua scalar of kind s makes of array dtype t."""
    k = kind(t)
    if s == "b":
        return t
    if s == "i":
        return "int64" if k == "b" else t
    if s == "f":
        return t if k in "fc" else "float64"
    if k == "c":
        return t
    return "complex64" if t in ("float16", "bfloat16", "float32") else "complex128"


def result_type(ops):
    arrays = [o.dtype for o in ops if isinstance(o, Arr)]
    scalars = [o for o in ops if isinstance(o, Sca) and o.k != "n"]
    if not arrays:
        t = "bool"
        for s in scalars:
            t = promote(t, SCALAR_DTYPE[s.k])
        return t
    t = arrays[0]
    for a in arrays[1:]:
        t = promote(t, a)
    for s in scalars:
        t = weak(t, s.k)
    return t


def float_type_for(t):
    if t in ("bool", "int8", "uint8"):
        return "float16"
    if t in ("int16", "uint16"):
        return "float32"
    if t in INTS:
        return "float64"
    return t


# --- operands ----------------------------------------------------------------

class Fail(Exception):
    """dlbridge raises code; late: found by the kernel, after the checks of out."""

    def __init__(self, code, late=False):
        super().__init__(code)
        self.code, self.late = code, late


class Arr:
    def __init__(self, base_index, dtype, layout, view):
        self.bi, self.dtype, self.layout, self.view = base_index, dtype, layout, view

    def token(self):
        return f"a{self.bi}:{self.layout}"


class Sca:
    """A Lua scalar: k in i (integer), f (float), b (boolean), c (complex
    {re=, im=}), n (nil)."""

    def __init__(self, k, v=None):
        self.k, self.v = k, v

    def token(self):
        if self.k == "n":
            return "sn"
        if self.k == "i":
            return f"si:{self.v}"
        if self.k == "b":
            return "sb:" + ("true" if self.v else "false")
        if self.k == "f":
            return "sf:" + hexfloat(self.v)
        return "sc:" + hexfloat(self.v.real) + "," + hexfloat(self.v.imag)

    def truth(self):
        return bool(self.v)


def hexfloat(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return float(v).hex()


def fits(s, dt):
    """Whether scalar s fits dt (dlb_scalar_store): an integer within the
    range of an integer dtype; a finite number that does not round to inf in
    a float/complex dtype; a complex number only in a complex dtype (or with
    a zero imaginary part)."""
    k = kind(dt)
    if s.k == "b":
        return True
    if k in "iu":
        if s.k != "i":
            return False
        info = np.iinfo(dt)
        return info.min <= s.v <= info.max
    if k == "b":
        return s.k == "b"
    vals = [s.v.real, s.v.imag] if s.k == "c" else [s.v]
    if s.k == "c" and k == "f" and s.v.imag != 0:
        return False
    for v in vals:
        v = float(v)
        if math.isfinite(v):
            r = cast(np.array([v]), "float32" if dt == "complex64" else
                     "float64" if dt == "complex128" else dt)
            if np.isinf(r).any():
                return False
    return True


def scalar_as(s, dt):
    """A 0-d carrier array of dt holding s."""
    if s.k == "b":
        return cast(np.array(s.v), dt)
    if s.k == "i" and kind(dt) in "iu":
        return np.array(s.v, dtype=carrier(dt))
    v = complex(s.v) if s.k == "c" else float(s.v)
    src = np.array(v, dtype=np.complex128 if s.k == "c" else np.float64)
    return cast(src, dt)


def values_in(o, dt):
    """Operand o (array view or scalar) as a carrier array of dt."""
    if isinstance(o, Arr):
        if o.dtype == dt:
            return o.view
        return cast(o.view, dt)
    return scalar_as(o, dt)


def truth(o):
    if isinstance(o, Arr):
        return o.view != 0
    return np.array(o.truth())


# --- operations ---------------------------------------------------------------

BINARY = ["add", "sub", "mul", "div", "floor_divide", "mod", "pow", "maximum", "minimum",
          "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
          "logical_and", "logical_or", "logical_xor", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal"]
UNARY = ["neg", "bitwise_not", "logical_not", "abs", "sign", "sqrt", "exp", "exp2", "expm1",
         "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite"]
TERNARY = ["where", "clip"]
TRANSCENDENTAL = {"sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                  "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "atan2"}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
ORDERED = {"less", "less_equal", "greater", "greater_equal"}
LOGICAL = {"logical_and", "logical_or", "logical_xor", "logical_not"}
BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
           "bitwise_not"}
ROUNDING = {"floor", "ceil", "trunc", "round"}
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floor_divide": "//", "mod": "%",
             "pow": "^", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "~",
             "left_shift": "<<", "right_shift": ">>", "neg": "neg", "bitwise_not": "bnot"}
METHOD_ALIASES = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                  "greater": "gt", "greater_equal": "ge", "sub": "subtract", "mul": "multiply",
                  "div": "divide", "pow": "power", "neg": "negative", "bitwise_not": "invert"}
NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
      "floor_divide": np.floor_divide, "mod": np.remainder, "pow": np.power,
      "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2,
      "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
      "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
      "right_shift": np.right_shift, "logical_and": np.logical_and,
      "logical_or": np.logical_or, "logical_xor": np.logical_xor, "equal": np.equal,
      "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
      "greater": np.greater, "greater_equal": np.greater_equal, "neg": np.negative,
      "bitwise_not": np.invert, "logical_not": np.logical_not, "abs": np.abs,
      "sign": np.sign, "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1,
      "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
      "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
      "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
      "trunc": np.trunc, "round": np.rint, "isnan": np.isnan, "isinf": np.isinf,
      "isfinite": np.isfinite}


class Plan:
    """What dlbridge computes: the dtype the scalars must fit (None: they
    need not), the dtype the inputs are converted to, the result dtype, the
    comparison mode, and the function of the converted inputs."""

    def __init__(self, fit, compute, result, cmp, fn):
        self.fit, self.compute, self.result, self.cmp, self.fn = fit, compute, result, cmp, fn


def in_float(fn, result):
    """The reference of the transcendental functions: real ones computed in
    long double (x87, 64-bit mantissa: glibc's *l functions) from carriers
    of result and rounded into result, nearly always the correctly rounded
    value (NumPy's own float64 functions are SIMD ones, up to 4 ulp away
    from it, on AVX-512 machines); complex ones in NumPy's complex128 (C99's
    functions and npymath's formulas, which dlbridge uses as well)."""
    wide = np.complex128 if kind(result) == "c" else np.longdouble

    def run(*xs):
        return cast(fn(*[np.asarray(x).astype(wide) for x in xs]), result)
    return run


def in_f32_for_bf16(fn, result):
    """bfloat16 computes in float32 and rounds once (as float16 does in NumPy)."""
    if result != "bfloat16":
        return fn

    def run(*xs):
        return round_bf16(fn(*[np.asarray(x, dtype=np.float32) for x in xs]))
    return run


def transcendental_cmp(dt, op=None):
    """float32: within 2 ulp of the correctly rounded float64 result (SLEEF's
    1-ulp functions, plus the reference's own rounding), tanh within 4 (SLEEF's
    3.5-ulp function, as NumPy's own float32 tanh is SVML's 4-ulp one);
    float64 sin and cos within 8 of NumPy's (both 3.5-4-ulp functions: SLEEF's
    and SVML's); other float64: within 2 ulp
    of NumPy's float64 (glibc / NumPy's SIMD, each within 1 ulp of the true
    value); float16/bfloat16 compute in float32 and round once more: 1 ulp of
    their own; complex: 8 eps of |want| per part (C99 complex functions)."""
    if dt in ("float16", "bfloat16"):
        return "u1"
    if dt == "float32" and op == "tanh":
        return "u4"
    if dt == "float64" and op in ("sin", "cos"):
        return "u8"
    if dt in ("float32", "float64"):
        return "u2"
    return "r8"


def complex_sign(z):
    """DIFF: sign(z) = z/|z| as NumPy 2 computes it (NumPy 1.24 gives
    sign(re) + 0j): 0 for 0; NaN when |z| is NaN or both parts are
    infinite; one infinite part gives the unit vector along it."""
    z = np.asarray(z)
    re, im = z.real, z.imag
    r = np.hypot(re, im)
    safe = np.where((r == 0) | ~np.isfinite(r), 1, r)
    out = (re / safe) + 1j * (im / safe)
    out = np.where(r == 0, 0, out)
    inf_re = np.where(re > 0, 1.0, -1.0) + 0j
    inf_im = 1j * np.where(im > 0, 1.0, -1.0)
    out = np.where(np.isinf(r) & np.isinf(re), inf_re, out)
    out = np.where(np.isinf(r) & ~np.isinf(re), inf_im, out)
    out = np.where(np.isinf(re) & np.isinf(im), complex(np.nan, np.nan), out)
    out = np.where(np.isnan(r), complex(np.nan, np.nan), out)
    return out.astype(z.dtype)


def plan(op, args):
    """dlbridge's rule for op over args, or raises Fail(code)."""
    if op == "where":
        c = result_type(args[1:])
        return Plan(c, c, c, "x", lambda cond, x, y: np.where(cond, x, y))
    if op == "clip":
        bounds = [a for a in args if not (isinstance(a, Sca) and a.k == "n")]
        c = result_type(bounds)
        if kind(c) == "c":
            raise Fail("DTYPE")
        return Plan(c, c, c, "x", None)
    c = result_type(args)
    k = kind(c)
    fn = NP[op]
    if op in ("add", "mul", "sub", "neg", "maximum", "minimum", "abs", "sign"):
        if k == "b" and op in ("sub", "neg", "sign"):
            raise Fail("DTYPE")
        if k == "c" and op in ("maximum", "minimum"):
            raise Fail("DTYPE")  # DIFF: NumPy orders complex lexicographically
        if op == "abs" and k == "c":  # hypot (NumPy's SIMD abs is up to 2 ulp off)
            real = "float32" if c == "complex64" else "float64"
            return Plan(c, c, real, "u1", lambda z: cast(np.hypot(
                z.real.astype(np.longdouble), z.imag.astype(np.longdouble)), real))
        if op == "sign" and k == "c":
            return Plan(c, c, c, "r2", complex_sign)  # |z| in z's own precision, as NumPy 2
        # maximum(-0.0, 0.0) may be either zero (NumPy's SIMD loops differ too)
        cmp = "r2" if k == "c" and op == "mul" else "s" if op in ("maximum", "minimum") else "x"
        return Plan(c, c, c, cmp, in_f32_for_bf16(fn, c))
    if op == "div":
        r = c if k in "fc" else "float64"
        return Plan(r, r, r, "r2" if k == "c" else "x", in_f32_for_bf16(fn, r))
    if op in ("floor_divide", "mod", "pow"):
        if k == "b":
            c = "int8"  # NumPy: bool // bool and friends use the int8 loop
        if k == "c" and op != "pow":
            raise Fail("DTYPE")  # DIFF: no complex // and % (NumPy 1.24 has none either)
        cmp = "r8" if k == "c" else "u1" if op == "pow" and k == "f" else "x"
        return Plan(c, c, c, cmp, in_f32_for_bf16(fn, c))
    if op in BITWISE:
        if k not in "biu":
            raise Fail("DTYPE")
        if k == "b" and op in ("left_shift", "right_shift"):
            c = "int8"
        return Plan(c, c, c, "x", fn)
    if op in LOGICAL:
        return Plan(None, "bool", "bool", "x", fn)
    if op in COMPARISONS:
        if k == "c" and op in ORDERED:
            raise Fail("DTYPE")  # DIFF: NumPy orders complex lexicographically
        return Plan("cmp", c, "bool", "x", in_f32_for_bf16(fn, c))
    if op in TRANSCENDENTAL:
        r = float_type_for(c)
        if op == "atan2" and kind(r) == "c":
            raise Fail("DTYPE")
        if r == "complex64":  # NumPy's own complex64 formulas (npymath), not float64's
            return Plan(r, r, r, transcendental_cmp(r), fn)
        return Plan(r, r, r, transcendental_cmp(r, op), in_float(fn, r))
    if op in ROUNDING:
        if k == "c" and op == "round":
            return Plan(c, c, c, "x", fn)  # np.round rounds each part
        if k == "c":
            raise Fail("DTYPE")
        if k in "biu":
            # DIFF: integers keep their dtype and value (NumPy >= 2.1's rule;
            # 1.24 computes them in float)
            return Plan(c, c, c, "x", lambda x: x)
        return Plan(c, c, c, "x", in_f32_for_bf16(fn, c))
    if op in ("isnan", "isinf", "isfinite"):
        return Plan(c, c, "bool", "x", fn)
    raise AssertionError(op)


def exact_compare(op, args, c):
    """A comparison with a scalar outside dtype c: exact, in Python numbers."""
    def val(o):
        if isinstance(o, Arr):
            v = o.view.astype(np.float64) if o.dtype == "bfloat16" else o.view
            return v.astype(object) if kind(o.dtype) in "iub" else v.astype(np.float64)
        return np.array(o.v, dtype=object) if o.k in "ib" else np.array(float(o.v))
    x, y = (val(a) for a in args)
    return np.asarray(NP[op](x, y), dtype=bool)


def compute(op, args, shape):
    """(result dtype, cmp, result carrier array) or raises Fail."""
    p = plan(op, args)
    scalars = [a for a in args if isinstance(a, Sca) and a.k != "n"]
    if op == "where":
        scalars = [a for a in args[1:] if isinstance(a, Sca)]
    exact = False
    if p.fit == "cmp":
        for s in scalars:
            if s.k == "c":
                continue
            if not fits(s, p.compute):
                exact = True
    elif p.fit is not None:
        if op == "clip":
            return compute_clip(args, shape)
        for s in scalars:
            if not fits(s, p.fit):
                raise Fail("VALUE")
    if exact:
        return p.result, "x", np.broadcast_to(exact_compare(op, args, p.compute), shape)
    if op == "where":
        cond = truth(args[0])
        out = p.fn(cond, values_in(args[1], p.compute), values_in(args[2], p.compute))
        return p.result, p.cmp, np.broadcast_to(out, shape)
    if op in LOGICAL:
        out = p.fn(*[truth(a) for a in args])
        return p.result, p.cmp, np.broadcast_to(out, shape)
    xs = [values_in(a, p.compute) for a in args]
    if op == "pow" and kind(p.compute) in "iu" and int(np.prod(shape)) > 0:
        if (np.broadcast_to(xs[1], shape) < 0).any():
            raise Fail("VALUE", late=True)  # NumPy: integers to negative integer powers
    out = np.asarray(p.fn(*xs))
    if p.result != "bfloat16":
        out = out.astype(carrier(p.result))
    return p.result, p.cmp, np.broadcast_to(out, shape)


def compute_clip(args, shape):
    """dl.clip(a, lo, hi): maximum(a, lo), then minimum with hi, in the
    common dtype of a and both bounds (NumPy's np.clip)."""
    a, lo, hi = args
    bounds = [x for x in args if not (isinstance(x, Sca) and x.k == "n")]
    c = result_type(bounds)
    for s in bounds:
        if isinstance(s, Sca) and not fits(s, c):
            raise Fail("VALUE")
    out = values_in(a, c)
    f = in_f32_for_bf16(np.maximum, c)
    if not (isinstance(lo, Sca) and lo.k == "n"):
        out = f(out, values_in(lo, c))
    f = in_f32_for_bf16(np.minimum, c)
    if not (isinstance(hi, Sca) and hi.k == "n"):
        out = f(out, values_in(hi, c))
    out = np.asarray(out)
    if c != "bfloat16":
        out = out.astype(carrier(c))
    return c, "s", np.broadcast_to(out, shape)


# --- known dlbridge bugs --------------------------------------------------------
# Each tag names a disagreement with NumPy reported to the maintainers;
# compute_check.lua's KNOWN table lists the ones still open. A case that can
# meet one carries its tag, so that the rest of the grid stays strict.

def is_nil(o):
    return isinstance(o, Sca) and o.k == "n"


def known_bug(op, args, shape):
    if op == "clip":
        # dl.clip takes dtype, shape (and its errors) from maximum(a, lo) first
        a, lo, hi = args
        first = [a] if is_nil(lo) else [a, lo]
        bounds = [x for x in args if not is_nil(x)]
        first_shape = np.broadcast_shapes(*[x.view.shape for x in first if isinstance(x, Arr)])
        if result_type(first) != result_type(bounds) or first_shape != tuple(shape):
            return "clip_first_step"
        return None
    try:
        p = plan(op, args)
    except Fail:
        return None
    if op == "pow" and kind(p.result) == "c":
        # NumPy's npy_cpow: exact products for integer exponents, its own 0**z
        # and z**0; dlbridge: C99 cpow (complex64 without the z**0 case)
        a = np.broadcast_to(values_in(args[0], p.result), shape)
        b = np.broadcast_to(values_in(args[1], p.result), shape)
        integral = (b.imag == 0) & (b.real == np.round(b.real)) & (np.abs(b.real) < 100)
        if ((a == 0) | ~np.isfinite(a) | ~np.isfinite(b) | integral).any():
            return "complex_pow"
    return None


# --- values --------------------------------------------------------------------

def random_floats(n, domain):
    if domain == "unit":  # asin, acos, and friends near their edges
        v = rng.uniform(-1.1, 1.1, n)
    elif domain == "exp":
        v = rng.normal(size=n) * rng.choice([1.0, 10.0, 100.0], n)
    elif domain == "half":  # round: halves and near-halves
        v = rng.integers(-20, 20, n) / 2.0 + rng.choice([0, 0, 1e-3, -1e-3], n)
    elif domain == "small":
        v = rng.integers(-6, 7, n).astype(np.float64) * rng.choice([1, 0.5, 1.25], n)
    else:  # "any", and "sum" (no values whose sums overflow: NumPy's do too)
        v = rng.normal(size=n) * 10.0 ** rng.integers(-3, 5, n)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5]
    if domain == "exp":  # where exp overflows but sinh/cosh do not yet (float32, float64)
        specials += [88.9, -89.2, 89.41, 709.9, -710.3, 710.47, 11.0, -11.5]
    elif domain == "any":  # the top of the float32 and float64 ranges, subnormals
        specials += [3.0e38, -3.3e38, 1.7e308, -1.0e308, 5e-324, -1e-40]
    elif domain == "sum":
        specials += [5e-324, -1e-40, 1e-310]
    if n:
        for _ in range(int(rng.integers(0, 3))):
            v[rng.integers(0, n)] = specials[rng.integers(0, len(specials))]
    return v


def random_values(dt, n, domain="any"):
    """n values of dt as a carrier array."""
    if dt == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dt in INTS:
        info = np.iinfo(dt)
        if domain == "shift":
            v = rng.integers(-2 if info.min < 0 else 0, bits(dt) + 3, n)
            return v.astype(dt)
        if domain in ("small", "exponent"):
            lo = 0 if info.min == 0 else -3 if domain == "small" else 0
            v = rng.integers(lo, 6, n).astype(dt)
            if domain == "exponent" and info.min < 0 and n and rng.random() < 0.08:
                v[rng.integers(0, n)] = -1
            return v
        full = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = rng.integers(max(info.min, -8), min(info.max, 8) + 1, n).astype(dt)
        v = np.where(rng.random(n) < 0.5, full, small)
        if domain == "divisor" and n:
            v[rng.integers(0, n)] = 0
            if info.min < 0:
                v[rng.integers(0, n)] = -1
        if n and rng.random() < 0.3:
            v[rng.integers(0, n)] = info.min if rng.random() < 0.5 else info.max
        return v
    if dt in COMPLEX:  # no parts near the top of the range: the order of products decides
        part = "sum" if domain in ("any", "half") else domain
        re, im = random_floats(n, part), random_floats(n, part)
        if domain == "exp":
            im = im * 0.5
        return (re + 1j * im).astype(dt)
    v = random_floats(n, domain)
    if dt == "float16":
        v = np.where(np.abs(v) > 60000, v / 1e4, v)
    return cast(v, dt)


def domain_of(op, position):
    if op in ("asin", "acos", "atanh"):
        return "unit"
    if op in ("exp", "exp2", "expm1", "sinh", "cosh", "tanh"):
        return "exp"
    if op == "round":
        return "half"
    if op in ("left_shift", "right_shift") and position == 1:
        return "shift"
    if op == "pow":
        return "exponent" if position == 1 else "small"
    if op in ("floor_divide", "mod", "div") and position == 1:
        return "divisor"
    return "any"


# --- shapes and layouts -------------------------------------------------------

def random_shape(big=False):
    if big:  # beyond one 1024-element chunk of the buffered walk
        r = rng.random()
        if r < 0.4:
            return (int(rng.integers(1025, 1600)),)
        if r < 0.7:
            return (int(rng.integers(33, 45)), int(rng.integers(33, 45)))
        return (3, int(rng.integers(342, 500)))
    ndim = int(rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]))
    return tuple(int(rng.integers(1, 6)) for _ in range(ndim))


def broadcast_pattern(nin):
    """Shapes of nin operands and the broadcast result's shape."""
    r = rng.random()
    if nin == 1:
        shape = random_shape(big=r < 0.03)
        if rng.random() < 0.05:
            shape = shape[:-1] + (0,) if shape else (0,)
        return [shape], shape
    if r < 0.03:
        s = random_shape(big=True)
        shapes = [s] * nin
        if len(s) >= 2 and rng.random() < 0.5:
            shapes[int(rng.integers(0, nin))] = (1,) + s[1:]
        return shapes, s
    if r < 0.15:  # (3,1) + (1,4)
        a, b = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        shapes = [(a, 1), (1, b)] + [(1, 1)] * (nin - 2)
        rng.shuffle(shapes)
        return shapes, (a, b)
    if r < 0.22:  # (5,) + (2,5)
        a, b = int(rng.integers(1, 5)), int(rng.integers(1, 7))
        shapes = [(b,), (a, b)] + [(b,)] * (nin - 2)
        rng.shuffle(shapes)
        return shapes, (a, b)
    if r < 0.30:  # 0-d + n-d
        s = random_shape()
        shapes = [()] + [s] * (nin - 1)
        rng.shuffle(shapes)
        return shapes, s
    if r < 0.36:  # size 0
        s = pick([[(0,), (1,)], [(0, 3), (1, 3)], [(2, 0), (2, 1)], [(0,), (0,)],
                  [(3, 0, 2), (2,)]])
        shapes = [tuple(x) for x in s] + [tuple(s[0])] * (nin - 2)
        rng.shuffle(shapes)
        return shapes, np.broadcast_shapes(*shapes)
    if r < 0.55:  # same shape
        s = random_shape()
        return [s] * nin, s
    # random broadcasting: each operand drops leading dims, keeps some as 1
    s = random_shape()
    shapes = []
    for _ in range(nin):
        drop = int(rng.integers(0, len(s) + 1)) if rng.random() < 0.4 else 0
        t = [1 if rng.random() < 0.3 else e for e in s[drop:]]
        shapes.append(tuple(t))
    return shapes, np.broadcast_shapes(*shapes)


def fmt_shape(shape):
    return "x".join(str(s) for s in shape) if len(shape) else "-"


def layout_for(view_shape, allow_expand=True, plain=0.35):
    """(base shape, layout) such that the layout applied to a base of that
    shape gives view_shape."""
    v = list(view_shape)
    if rng.random() < plain:
        return tuple(v), "-"
    ops_tail = []
    pre = v
    if allow_expand and v and rng.random() < 0.25:
        pre = [1 if (e != 1 and rng.random() < 0.5) else e for e in v]
        if rng.random() < 0.3 and len(pre) > 1:
            pre = pre[1:]
        if pre != v:
            ops_tail = ["exp" + fmt_shape(v)]
    dim_ops, base = [], []
    for d, e in enumerate(pre, start=1):
        r = rng.random()
        if r < 0.2:
            dim_ops.append(f"rev{d}")
            base.append(e)
        elif r < 0.35:
            k = int(rng.integers(2, 4))
            neg = rng.random() < 0.4
            dim_ops.append(f"{'nstep' if neg else 'step'}{d}.{k}")
            base.append(0 if e == 0 else e * k - int(rng.integers(0, k)))
        elif r < 0.45:
            dim_ops.append(f"{'off' if rng.random() < 0.5 else 'trim'}{d}")
            base.append(e + 1)
        else:
            base.append(e)
    ops = dim_ops + ops_tail
    if len(pre) >= 2 and rng.random() < 0.4:
        ops = ["T"] + ops
        base = base[::-1]
    return tuple(base), "+".join(ops) if ops else "-"


def apply_layout(a, layout):
    for op in [] if layout == "-" else layout.split("+"):
        if op == "T":
            a = a.T
            continue
        if op.startswith("exp"):
            shape = () if op == "exp-" else tuple(int(x) for x in op[3:].split("x"))
            b = np.broadcast_to(a, shape)  # writable where a is (dlbridge's rule)
            a = np.lib.stride_tricks.as_strided(a, b.shape, b.strides,
                                                writeable=a.flags.writeable)
            continue
        name = op.rstrip("0123456789.")
        arg = op[len(name):]
        d = int(arg.split(".")[0]) - 1
        k = int(arg.split(".")[1]) if "." in arg else 1
        sl = {"rev": slice(None, None, -1), "step": slice(None, None, k),
              "nstep": slice(None, None, -k), "off": slice(1, None),
              "trim": slice(None, -1)}[name]
        index = [slice(None)] * a.ndim
        index[d] = sl
        a = a[tuple(index)]
    return a


# --- cases -------------------------------------------------------------------

class Case:
    def __init__(self, op, form):
        self.op, self.form = op, form
        self.bases = []  # (dtype, carrier array)
        self.args = []
        self.out = "-"
        self.known = None

    def base(self, dtype, shape, domain="any"):
        n = int(np.prod(shape)) if len(shape) else 1
        values = random_values(dtype, n, domain).reshape(shape)
        self.bases.append((dtype, values))
        return len(self.bases) - 1

    def array(self, dtype, shape, domain="any", allow_expand=True):
        base_shape, layout = layout_for(shape, allow_expand)
        bi = self.base(dtype, base_shape, domain)
        view = apply_layout(self.bases[bi][1], layout)
        assert view.shape == tuple(shape), (shape, base_shape, layout, view.shape)
        return Arr(bi, dtype, layout, view)


CASES = []


def emit(case, expect):
    fields = [str(len(CASES) + 1), case.op, case.form, str(len(case.bases))]
    for dt, values in case.bases:
        fields += [dt, fmt_shape(values.shape), to_bytes(values, dt).hex() or "-"]
    fields.append(str(len(case.args)))
    fields += [a.token() for a in case.args]
    fields.append(case.out)
    fields.append(case.known or "-")
    fields.append(expect)
    CASES.append(" ".join(fields))


def expect_result(dt, cmp, values):
    return f"R:{dt}:{fmt_shape(values.shape)}:{cmp}:{to_bytes(values, dt).hex() or '-'}"


def random_scalar(op, position, like):
    """A Lua scalar for op's operand at position; like: the array dtype it
    meets (to pick in-range and out-of-range values)."""
    r = rng.random()
    if r < 0.12:
        return Sca("b", bool(rng.integers(0, 2)))
    if r < 0.22:
        return Sca("c", complex(float(rng.normal()), float(rng.normal())))
    if r < 0.55:
        v = float(random_floats(1, domain_of(op, position))[0])
        if rng.random() < 0.08:
            v = float(rng.choice([1e6, -1e6, 1e39, 3e38, 70000.0]))  # overflow float16/32
        return Sca("f", v)
    dom = domain_of(op, position)
    if dom == "shift":
        return Sca("i", int(rng.integers(-1, 70)))
    if dom == "exponent":
        return Sca("i", int(rng.integers(-1, 6)))
    if rng.random() < 0.15 and like in INTS and like != "int64":  # just outside: VALUE
        info = np.iinfo(like)
        outside = [v for v in (int(info.max) + 1, int(info.min) - 1) if -2**63 <= v < 2**63]
        return Sca("i", outside[int(rng.integers(0, len(outside)))])
    if rng.random() < 0.1:
        return Sca("i", int(rng.choice([300, -1, 70000, -129, 2 ** 40, -(2 ** 62)])))
    return Sca("i", int(rng.integers(-9, 10)))


def choose_form(op, args):
    first_array = isinstance(args[0], Arr)
    any_array = any(isinstance(a, Arr) for a in args)
    r = rng.random()
    if op in OPERATORS and any_array and r < 0.35:
        return "op" + OPERATORS[op]
    if first_array and r < 0.7 and op != "where":
        name = METHOD_ALIASES.get(op, op) if rng.random() < 0.5 else op
        return "m" + name
    return "fn"


def out_plan(case, shape, nin, can_out):
    """Maybe picks an out for the case: ("new", dtype), ("input", k), or
    ("overlap", ...) handled by overlap cases; None for no out."""
    if not can_out or rng.random() < 0.7:
        return None
    r = rng.random()
    if r < 0.45:
        return ("new", None)
    if r < 0.7:
        return ("new", DTYPES[int(rng.integers(0, len(DTYPES)))])
    arrays = [k for k, a in enumerate(case.args) if isinstance(a, Arr) and a.view.shape == shape]
    if arrays:
        return ("input", arrays[int(rng.integers(0, len(arrays)))])
    return ("new", None)


def finish(case, shape, want_out):
    """Computes the expectation (with case.out set up) and emits the case."""
    late = None
    case.known = known_bug(case.op, case.args, shape)
    if case.op == "clip" and want_out:
        # dl.clip's second step reads its out (another dtype; hi overwritten)
        odt = want_out[1] if want_out[0] == "new" else case.args[want_out[1]].dtype
        common = result_type([x for x in case.args if not is_nil(x)])
        if odt not in (None, common) or want_out == ("input", 2):
            case.known = case.known or "clip_first_step"
    try:
        dt, cmp, values = compute(case.op, case.args, shape)
    except Fail as f:
        if not f.late:
            if case.op == "clip" and want_out:  # its first step checks out first
                case.known = case.known or "clip_first_step"
            if want_out and want_out[0] == "new":  # the out is made all the same
                guess = result_type([x for x in case.args if not is_nil(x)])
                ob = case.array(want_out[1] or guess, shape, allow_expand=False)
                case.out = "o" + ob.token()[1:]
            elif want_out:
                case.out = f"i{want_out[1] + 1}"
            emit(case, "E:" + f.code)
            return
        late, dt = f.code, result_type(case.args)
    if not want_out:
        emit(case, "E:" + late if late else expect_result(dt, cmp, np.array(values)))
        return
    if want_out[0] == "new":
        odt = want_out[1] or dt
        ob = case.array(odt, shape, allow_expand=rng.random() < 0.1)
        case.out = "o" + ob.token()[1:]
        target_bi, target_layout, target_view = ob.bi, ob.layout, ob.view
    else:
        k = want_out[1]
        odt = case.args[k].dtype
        case.out = f"i{k + 1}"
        target_bi, target_layout = case.args[k].bi, case.args[k].layout
        target_view = case.args[k].view
    if any(st == 0 and n > 1 for st, n in zip(target_view.strides, target_view.shape)):
        emit(case, "E:READ_ONLY")  # a view that repeats elements (expanded) is read-only
    elif not can_cast_same_kind(dt, odt):
        emit(case, "E:DTYPE")
    elif late:
        emit(case, "E:" + late)
    else:
        write_out(case, target_bi, target_layout, odt, dt, cmp, values)


def write_out(case, bi, layout, odt, dt, cmp, values):
    base_dt, base = case.bases[bi]
    after = base.copy()
    view = apply_layout(after, layout)
    src = values
    if dt == "bfloat16" and odt != "bfloat16":
        src = np.asarray(values, dtype=np.float32)
    view[...] = cast(src, odt)
    if dt in ("float16", "bfloat16") and odt != dt and case.op != "where":
        # the float32 result reaches out unrounded to dt
        case.known = case.known or "half_out"
    emit(case, expect_result(base_dt, scale_cmp(cmp, dt, odt), after))


MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "complex64": 24, "float64": 53,
            "complex128": 53}


def scale_cmp(cmp, dt, odt):
    """A tolerance in ulp (or eps) of dt, in those of odt: a wider out counts
    more of its own ulp in the same distance. Not in dt's subnormals, where
    dt's ulp is wider than the shift says: float32 ulps in a float64 out are
    compared as the float32s they hold ("n", the checker narrows)."""
    if cmp in ("x", "s") or odt not in MANTISSA or dt not in MANTISSA:
        return cmp
    if cmp[0] == "u" and MANTISSA[dt] == 24 and MANTISSA[odt] == 53:
        return "n" + cmp[1:]
    shift = MANTISSA[odt] - MANTISSA[dt]
    n = int(cmp[1:])
    return cmp[0] + str(n << shift if shift > 0 else n)


def elementwise_case(op, dtypes, nin):
    """One case of op with array operands of the given dtypes (None: a
    scalar there)."""
    shapes, shape = broadcast_pattern(nin)
    shape = tuple(shape)
    case = Case(op, "fn")
    for k, dt in enumerate(dtypes):
        if dt is None:
            like = next((d for d in dtypes if d), "float64")
            case.args.append(random_scalar(op, k, like))
        else:
            case.args.append(case.array(dt, shapes[k], domain_of(op, k)))
    shape = np.broadcast_shapes(*[a.view.shape for a in case.args if isinstance(a, Arr)])
    case.form = choose_form(op, case.args)
    can_out = case.form == "fn" or case.form.startswith("m")
    finish(case, shape, out_plan(case, shape, nin, can_out))


def overlap_case(op, dt, nin):
    """out is a view of an input's memory shifted by one element (or the
    input reversed): the result is as if the input were copied first."""
    n = int(rng.integers(2, 12)) if rng.random() < 0.7 else int(rng.integers(1100, 2100))
    case = Case(op, "fn")
    bi = case.base(dt, (n,), domain_of(op, 0))
    base = case.bases[bi][1]
    mode = rng.choice(["forward", "backward", "reverse"])
    in_layout, out_layout = {"forward": ("trim1", "off1"), "backward": ("off1", "trim1"),
                             "reverse": ("rev1", "-")}[mode]
    shared = Arr(bi, dt, in_layout, apply_layout(base, in_layout))
    shape = shared.view.shape
    position = int(rng.integers(0, nin))
    for k in range(nin):
        if k == position:
            case.args.append(shared)
        elif rng.random() < 0.3:
            case.args.append(random_scalar(op, k, dt))
        else:
            case.args.append(case.array(dt, shape, domain_of(op, k)))
    case.form = "fn" if rng.random() < 0.5 else "m" + op
    if not isinstance(case.args[0], Arr):
        case.form = "fn"
    case.out = f"o{bi}:{out_layout}"
    case.known = known_bug(op, case.args, shape)
    try:
        rdt, cmp, values = compute(op, case.args, shape)
    except Fail as f:
        if not f.late or can_cast_same_kind(result_type(case.args), dt):
            emit(case, "E:" + f.code)
        else:
            emit(case, "E:DTYPE")
        return
    if not can_cast_same_kind(rdt, dt):
        emit(case, "E:DTYPE")
        return
    write_out(case, bi, out_layout, dt, rdt, cmp, values)


def where_case(cond_dt, x_dt, y_dt):
    shapes, shape = broadcast_pattern(3)
    case = Case("where", "fn")
    for k, dt in enumerate((cond_dt, x_dt, y_dt)):
        if dt is None:
            case.args.append(random_scalar("where", k, x_dt or y_dt or "float64"))
        else:
            case.args.append(case.array(dt, shapes[k]))
    shape = np.broadcast_shapes(*[a.view.shape for a in case.args if isinstance(a, Arr)])
    finish(case, tuple(shape), out_plan(case, tuple(shape), 3, True))


def clip_case(dt, bound_dt):
    """dl.clip(a, lo, hi): bounds are arrays of bound_dt, scalars, or nil."""
    shapes, shape = broadcast_pattern(3)
    case = Case("clip", "fn")
    case.args.append(case.array(dt, shapes[0]))
    nil_at = int(rng.integers(1, 3)) if rng.random() < 0.2 else None
    for k in (1, 2):
        if k == nil_at:
            case.args.append(Sca("n"))
        elif bound_dt is None or rng.random() < 0.3:
            s = random_scalar("clip", k, dt)
            if rng.random() < 0.8 and s.k in "ic":  # mostly in range
                s = Sca("i", int(rng.integers(-3, 4)) if dt not in INTS or dt[0] != "u"
                        else int(rng.integers(0, 6)))
            case.args.append(s)
        else:
            case.args.append(case.array(bound_dt, shapes[k]))
    shape = np.broadcast_shapes(*[a.view.shape for a in case.args if isinstance(a, Arr)])
    case.form = "fn" if rng.random() < 0.5 else "mclip"
    finish(case, tuple(shape), out_plan(case, tuple(shape), 3, True))


def fixed_array(case, dtype, values):
    """A contiguous view of a new base holding values (a nested list)."""
    v = cast(np.array(values), dtype) if dtype == "bfloat16" else np.array(values, dtype=dtype)
    case.bases.append((dtype, v))
    return Arr(len(case.bases) - 1, dtype, "-", v)


def regression_cases():
    """Fixed cases: the smallest repro of each bug this oracle found, so that
    each fails (or, tagged known, is counted) on every run until it is fixed."""
    # half_out: the float16 sum 1 + 2^-11 is 1, also when out is float32
    case = Case("add", "fn")
    case.args = [fixed_array(case, "float16", [1.0]), fixed_array(case, "float16", [2.0 ** -11])]
    ob = fixed_array(case, "float32", [0.0])
    case.out, case.known = f"o{ob.bi}:-", "half_out"
    emit(case, expect_result("float32", "x", np.array([1.0], np.float32)))
    # sinh/cosh near the overflow of exp (fixed: SLEEF's edge patched with libm)
    for op, dt, x in [("cosh", "float32", 89.0), ("sinh", "float64", -710.0)]:
        case = Case(op, "fn")
        case.args = [fixed_array(case, dt, [x])]
        dt_, cmp, values = compute(op, case.args, (1,))
        emit(case, expect_result(dt_, cmp, np.array(values)))
    # complex_pow: integer exponents multiply exactly in NumPy
    case = Case("pow", "fn")
    case.args = [fixed_array(case, "complex128", [-2 + 2j]), Sca("i", 7)]
    case.known = "complex_pow"
    emit(case, expect_result("complex128", "r8", np.array([-1024 - 1024j])))
    # clip_first_step: the result dtype is that of a and both bounds
    case = Case("clip", "fn")
    case.args = [fixed_array(case, "int32", [1]), Sca("i", 0), fixed_array(case, "float64", [0.5])]
    case.known = "clip_first_step"
    emit(case, expect_result("float64", "x", np.array([0.5])))
    # half_dtype_option: the elements are cast to float16 first (2049 -> 2048)
    case = Case("sum", "fn")
    case.args = [fixed_array(case, "int32", [2049, 1]), Opt(dtype="float16")]
    case.known = "half_dtype_option"
    emit(case, expect_value("float16", np.float16(2048.0)))
    # var of float32 with dtype = float16 (computed in float32, its own dtype):
    # the elements are still rounded to float16 first (2049, 2048 -> 2048, 2048)
    case = Case("var", "fn")
    x = fixed_array(case, "float32", [2049.0, 2048.0])
    case.args = [x, Opt(dtype="float16")]
    emit(case, expect_value("float16", np.var(x.view.astype(np.float16), dtype=np.float16)))
    # complex_row_sum: six equal rows sum as one row does, as NumPy's do
    row = [complex(float.fromhex(re), float.fromhex(im)) for re, im in [
        ("0x1.19d2d2p+0", "-0x1.6ea37ap+5"), ("0x1.59c9aep+14", "-0x1.022f12p+2"),
        ("-0x1.9d0a7p-8", "-0x1.8795cp+3"), ("-0x1.6f05ecp+6", "-0x1.98f0a2p+12"),
        ("-0x1.c6dac6p-16", "0x1.277c3ep-1")]]
    case = Case("sum", "fn")
    a = fixed_array(case, "complex64", [row] * 6)
    case.args = [a, Opt(dim=2)]
    case.known = "complex_row_sum"
    emit(case, expect_result("complex64", "x", np.sum(a.view, axis=1)))
    if "matmul" in FEATURES:
        # K = 0 with a reversed empty operand: zeros (UBSan once saw pointer
        # arithmetic on its NULL data in dlb_iter_each)
        case = Case("matmul", "fn")
        b = case.array("float32", (3, 0, 2))
        case.bases[b.bi] = ("float32", np.zeros((3, 0, 2), np.float32))
        case.args = [fixed_array(case, "float32", np.zeros((2, 0))),
                     Arr(b.bi, "float32", "rev1", np.zeros((3, 0, 2), np.float32))]
        emit(case, expect_result("float32", "x", np.zeros((3, 2, 2), np.float32)))


def error_cases():
    """Shapes that do not broadcast: SHAPE; an out of the wrong shape: SHAPE."""
    for op in ["add", "less", "atan2", "where"]:
        case = Case(op, "fn")
        nin = 3 if op == "where" else 2
        sh = [(2, 3), (4,), (3,)][:nin]
        for k in range(nin):
            case.args.append(case.array("float64", sh[k]))
        emit(case, "E:SHAPE")
    case = Case("add", "fn")
    case.args = [case.array("int32", (2, 3)), case.array("int32", (2, 3))]
    ob = case.array("int32", (3, 2), allow_expand=False)
    case.out = "o" + ob.token()[1:]
    emit(case, "E:SHAPE")


# --- reductions, matmul, concat/stack ------------------------------------------
# Run when dlbridge has them (compute_check.lua passes what it finds in dl).

class Opt:
    """A Lua options table: o:<key>=<value>;... (dim lists as 1.2.-1)."""

    def __init__(self, **kv):
        self.kv = kv

    def token(self):
        parts = []
        for k, v in self.kv.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, (list, tuple)):
                v = "L" + ".".join(str(d) for d in v)
            parts.append(f"{k}={v}")
        return "o:" + (";".join(parts) if parts else "-")


class Lst:
    """A Lua list of arrays: l:<a0:layout>|<a1:layout>..."""

    def __init__(self, arrays):
        self.arrays = arrays

    def token(self):
        return "l:" + ("|".join(a.token() for a in self.arrays) if self.arrays else "-")


DENORM_MIN = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149,
              "float64": 2.0 ** -1074}


def bound_for(dt, want, err, ops=1):
    """Per-element bounds: err (the computation's own relative error, as a
    float64 distance), two ulp of the result dtype (its final rounding), and
    ops times its smallest subnormal (the absolute error of each of ops
    operations that land in the subnormals). A complex reference with an
    infinite or NaN part gets an infinite bound: any non-finite result
    matches (the order of complex products decides between inf and NaN
    parts, and BLAS orders them its own way)."""
    w = np.abs(np.asarray(want, dtype=np.complex128 if kind(dt) == "c" else np.float64))
    real = {"complex64": "float32", "complex128": "float64"}.get(dt, dt)
    ulp = np.abs(cast(w, real).astype(np.float64)) * 2.0 ** (1 - MANTISSA[real])
    bound = np.asarray(err, dtype=np.float64) + 2 * ulp + (ops + 2) * DENORM_MIN[real]
    bound = np.minimum(np.nan_to_num(bound, nan=np.inf), np.finfo(np.float64).max)
    if kind(dt) == "c":
        want = np.asarray(want)
        bound = np.where(np.isfinite(want.real) & np.isfinite(want.imag), bound, np.inf)
    return bound


def expect_bounded(dt, values, bounds, value=False):
    """R/V with per-element absolute bounds (cmp "b")."""
    values = np.array(values)
    bounds = np.broadcast_to(np.asarray(bounds, dtype=np.float64), values.shape)
    data = to_bytes(values, dt).hex() or "-"
    extra = np.ascontiguousarray(bounds).tobytes().hex() or "-"
    if value:
        return f"V:{dt}:b:{data}:{extra}"
    return f"R:{dt}:{fmt_shape(values.shape)}:b:{data}:{extra}"


def expect_value(dt, values, cmp="x"):
    """A reduction over every dim: a Lua value (uint64 past 2^63: a float)."""
    values = np.array(values)
    if dt == "uint64" and int(values) >= 2 ** 63:
        return f"V:float64:{cmp}:{to_bytes(values.astype(np.float64), 'float64').hex()}"
    return f"V:{dt}:{cmp}:{to_bytes(values, dt).hex()}"


REDUCTIONS = ["sum", "prod", "mean", "min", "max", "argmin", "argmax", "all", "any",
              "count_nonzero", "std", "var"]
EPS = {dt: 2.0 ** (1 - m) for dt, m in MANTISSA.items()}


def reduce_result_dtype(op, dt, dtype_opt):
    k = kind(dt)
    if op in ("min", "max", "argmin", "argmax") and k == "c":
        raise Fail("DTYPE")  # DIFF: NumPy orders complex lexicographically
    if op in ("argmin", "argmax", "count_nonzero"):
        return "int64"
    if op in ("all", "any"):
        return "bool"
    if op in ("min", "max"):
        return dt
    if dtype_opt is not None:
        if op in ("mean", "std", "var") and kind(dtype_opt) not in "fc":
            raise Fail("DTYPE")
        if op in ("std", "var"):
            return {"complex64": "float32", "complex128": "float64"}.get(dtype_opt, dtype_opt)
        return dtype_opt
    if op in ("sum", "prod"):
        return "int64" if k in "bi" else "uint64" if k == "u" else dt
    if op == "mean":
        return "float64" if k in "biu" else dt
    return "float64" if k in "biu" else {"complex64": "float32",
                                          "complex128": "float64"}.get(dt, dt)


def order_decides_prod(conv, src, axes, keepdims):
    """Where a product's partial products, in some order of multiplication,
    leave the normal range of the type it is accumulated in (float32 for
    float16, bfloat16 and complex64; float64 else): there the order decides
    between the exact product and inf, 0 or NaN (inf times a later 0), and
    dlbridge's order is not the long-double reference's (any result passes).
    Every partial product's magnitude lies between 2^lo and 2^hi, the sums of
    the negative and the positive log2 of the finite nonzero magnitudes."""
    acc = np.float32 if src in ("float16", "bfloat16", "float32", "complex64") else np.float64
    m = np.abs(np.asarray(conv).astype(np.complex128 if kind(src) == "c" else np.float64))
    usable = np.isfinite(m) & (m != 0)
    with np.errstate(all="ignore"):
        lg = np.where(usable, np.log2(np.where(usable, m, 1.0)), 0.0)
    hi = np.sum(np.maximum(lg, 0.0), axis=axes, keepdims=keepdims)
    lo = np.sum(np.minimum(lg, 0.0), axis=axes, keepdims=keepdims)
    info = np.finfo(acc)
    return (hi >= np.log2(info.max) - 1) | (lo <= np.log2(info.tiny) + 1)


def reduce_reference(op, x, dt, axes, keepdims, dtype_opt, ddof, exact_sum):
    """(result dtype, values, cmp or bounds) of op over axes (a tuple) of the
    carrier array x of dtype dt; raises Fail."""
    r = reduce_result_dtype(op, dt, dtype_opt)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if op in ("min", "max", "argmin", "argmax") and n == 0:
        raise Fail("VALUE")
    if op in ("argmin", "argmax"):
        f = np.argmin if op == "argmin" else np.argmax
        if len(axes) == x.ndim:
            idx = f(x.reshape(-1)) if x.ndim else np.int64(0)
            out = np.array(idx + 1, dtype=np.int64)
            if keepdims:
                out = out.reshape((1,) * x.ndim)
        else:
            out = f(x, axis=axes[0], keepdims=keepdims).astype(np.int64) + 1
        return r, out, "x"
    if op in ("all", "any", "count_nonzero"):
        nz = x != 0
        if op == "count_nonzero":
            return r, np.sum(nz, axis=axes, keepdims=keepdims, dtype=np.int64), "x"
        f = np.all if op == "all" else np.any
        return r, f(nz, axis=axes, keepdims=keepdims), "x"
    if op in ("min", "max"):  # of -0.0 and 0.0 either may come out (as in NumPy's SIMD)
        f = np.min if op == "min" else np.max
        return r, np.asarray(f(x, axis=axes, keepdims=keepdims)), "s"
    src = dtype_opt or dt
    if kind(r) in "biu" and op in ("sum", "prod"):  # wrapping 64-bit accumulation
        acc = "uint64" if kind(src) == "u" else "int64"
        xs = cast(x, src).astype(acc)
        f = np.sum if op == "sum" else np.prod
        out = f(xs, axis=axes, keepdims=keepdims, dtype=acc)
        return r, np.asarray(out).astype(carrier(r)), "x"
    # float and complex: long double reference, bounds from the magnitudes
    if kind(src) in "biu":  # mean, std, var of bool and integers: in float64
        src = "float64"
    conv = cast(x, src) if src != dt else x
    wide = np.clongdouble if kind(src) == "c" else np.longdouble
    xl = np.asarray(conv).astype(wide)
    acc_eps = EPS["float32" if src in ("float16", "bfloat16") else
                  {"complex64": "float32", "complex128": "float64"}.get(src, src)]
    levels = 2 * (int(np.ceil(np.log2(max(n, 2)))) + 4)
    mag = np.sum(np.abs(xl), axis=axes, keepdims=keepdims).astype(np.float64)
    if op == "sum":
        out = np.sum(xl, axis=axes, keepdims=keepdims)
        if exact_sum and src in ("float16", "bfloat16"):
            # NumPy's pairwise sum in float32, rounded once at the end (NumPy
            # itself rounds float16 after each 8192-element run: DIFF)
            with np.errstate(all="ignore"):
                f32 = np.sum(np.asarray(conv, dtype=np.float32), axis=axes, keepdims=keepdims)
                return r, cast(f32, src), "x"
        if exact_sum and src in ("float32", "float64", "complex64", "complex128"):
            with np.errstate(all="ignore"):  # NumPy 1.24's own pairwise sum, bit for bit
                return r, np.asarray(np.sum(conv, axis=axes, keepdims=keepdims)), "x"
        return r, cast(out, r), bound_for(r, cast(out, r), levels * acc_eps * mag, n)
    if op == "prod":
        out = np.prod(xl, axis=axes, keepdims=keepdims)
        err = 2 * (n + 2) * acc_eps * np.abs(out).astype(np.float64)
        bound = bound_for(r, cast(out, r), err, n)
        return r, cast(out, r), np.where(order_decides_prod(conv, src, axes, keepdims), np.inf,
                                          bound)
    if op == "mean":
        with np.errstate(all="ignore"):  # empty: 0/0, NaN (complex: both parts)
            out = np.sum(xl, axis=axes, keepdims=keepdims) / wide(n)
        err = (levels + 2) * acc_eps * mag / max(n, 1)
        return r, cast(out, r), bound_for(r, cast(out, r), err, n)
    # std, var: two passes; n - ddof <= 0 gives inf (NaN for zero squares)
    with np.errstate(all="ignore"):
        m = np.sum(xl, axis=axes, keepdims=True) / n if n else np.nan
        dev = np.abs(xl - m) ** 2
        ss = np.sum(dev, axis=axes, keepdims=keepdims)
        div = max(n - ddof, 0)
        if n and not div:  # x/0: inf, or NaN where the squares vanish in the working dtype
            work = {"float64": np.float64, "complex128": np.complex128,
                    "complex64": np.complex64}.get(src, np.float32)
            cw = np.asarray(conv).astype(work)
            ss = np.sum(np.abs(cw - np.sum(cw, axis=axes, keepdims=True) / n) ** 2,
                        axis=axes, keepdims=keepdims).astype(np.longdouble)
        var = ss / np.longdouble(div) if n else np.full(ss.shape, np.nan)
        var = np.asarray(var).real.astype(np.longdouble)
        big = np.sum((np.abs(xl) + np.abs(m)) ** 2, axis=axes, keepdims=keepdims)
        err = (levels + 4) * acc_eps * np.asarray(big).real.astype(np.float64) / max(div, 1)
    if op == "var":
        return r, cast(var, r), bound_for(r, cast(var, r), err, 2 * n)
    # The squares that land in (or under) the working dtype's subnormals are
    # off by up to its smallest subnormal each (both NumPy and dlbridge get 0
    # for the float32 std of 5e-324 and -1e-40, whose squares underflow,
    # where the long double reference is 5e-41); sqrt carries an absolute
    # error d of the variance into at most sqrt(d) of the std.
    work = {"complex64": "float32", "complex128": "float64"}.get(r, r)
    var_err = err + (2 * n + 2) * DENORM_MIN[work] / max(div, 1)
    std = np.sqrt(var)
    return r, cast(std, r), bound_for(r, cast(std, r), np.sqrt(var_err), 2 * n)


NAN_REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanmin", "nanmax", "nanargmin", "nanargmax",
                  "nanstd", "nanvar"]


def nan_reference(op, x, dt, axes, keepdims, dtype_opt, ddof, exact_sum):
    """(result dtype, values, cmp or bounds) of the nan-reduction op (NumPy
    1.24's np.nan<op>) over axes of the carrier array x of dtype dt; raises
    Fail. Bool and integers: the plain reduction's. Floats and complex: NaN
    elements (a complex one: a NaN part) left out as NumPy does: read as 0
    (nansum, nanmean, nanvar: over the count of the others), 1 (nanprod),
    passed over (nanmin/nanmax: fmin/fmax), +-inf (nanargmin/nanargmax,
    which fail on a slice of NaNs only: ValueError)."""
    plain = op[3:]
    if kind(dt) not in "fc":
        return reduce_reference(plain, x, dt, axes, keepdims, dtype_opt, ddof, exact_sum)
    r = reduce_result_dtype(plain, dt, dtype_opt)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    nan = np.isnan(x)
    if plain in ("min", "max", "argmin", "argmax") and n == 0:
        raise Fail("VALUE")
    if plain in ("min", "max"):
        f = np.fmin if plain == "min" else np.fmax
        out = f.reduce(x, axis=axes, keepdims=keepdims) if axes else x.copy()
        return r, np.asarray(out), "s"
    if plain in ("argmin", "argmax"):
        if (np.sum(~nan, axis=axes) == 0).any():
            raise Fail("VALUE")  # NumPy: ValueError("All-NaN slice encountered")
        fill = np.inf if plain == "argmin" else -np.inf
        return reduce_reference(plain, np.where(nan, fill, x).astype(x.dtype), dt, axes,
                                keepdims, dtype_opt, ddof, exact_sum)
    x0 = np.where(nan, 1 if plain == "prod" else 0, x).astype(x.dtype)
    if plain in ("sum", "prod"):  # NumPy sums (multiplies) such a copy: nansum bit for bit
        return reduce_reference(plain, x0, dt, axes, keepdims, dtype_opt, ddof, exact_sum)
    src = dtype_opt or dt
    conv = cast(x0, src) if src != dt else x0
    wide = np.clongdouble if kind(src) == "c" else np.longdouble
    xl = np.asarray(conv).astype(wide)
    acc_eps = EPS["float32" if src in ("float16", "bfloat16") else
                  {"complex64": "float32", "complex128": "float64"}.get(src, src)]
    levels = 2 * (int(np.ceil(np.log2(max(n, 2)))) + 4)
    cnt = np.sum(~nan, axis=axes, keepdims=keepdims).astype(np.float64)
    mag = np.sum(np.abs(xl), axis=axes, keepdims=keepdims).astype(np.float64)
    with np.errstate(all="ignore"):
        if plain == "mean":  # a slice of NaNs only: 0/0, NaN
            out = np.sum(xl, axis=axes, keepdims=keepdims) / cnt.astype(np.longdouble)
            if kind(src) == "c":
                out = np.where(cnt == 0, complex(np.nan, np.nan), out)
            err = (levels + 2) * acc_eps * mag / np.maximum(cnt, 1)
            return r, cast(out, r), bound_for(r, cast(out, r), err, n)
        # nanvar, nanstd: count - ddof <= 0 gives NaN (NumPy's nanvar; var gives inf)
        cntk = np.sum(~nan, axis=axes, keepdims=True).astype(np.longdouble)
        m = np.sum(xl, axis=axes, keepdims=True) / cntk
        dev = np.where(nan, 0, np.abs(xl - m) ** 2)
        ss = np.asarray(np.sum(dev, axis=axes, keepdims=keepdims)).real.astype(np.longdouble)
        div = cnt - ddof
        var = np.where(div > 0, ss / np.maximum(div, 1).astype(np.longdouble), np.nan)
        big = np.sum(np.where(nan, 0, (np.abs(xl) + np.abs(m)) ** 2), axis=axes,
                     keepdims=keepdims)
        err = (levels + 4) * acc_eps * np.asarray(big).real.astype(np.float64) / np.maximum(div, 1)
    if plain == "var":
        return r, cast(var, r), bound_for(r, cast(var, r), err, 2 * n)
    work = {"complex64": "float32", "complex128": "float64"}.get(r, r)
    var_err = err + (2 * n + 2) * DENORM_MIN[work] / np.maximum(div, 1)
    std = np.sqrt(var)
    return r, cast(std, r), bound_for(r, cast(std, r), np.sqrt(var_err), 2 * n)


def with_nans(case, a):
    """a (of a float or complex dtype) with NaNs put into its base at a
    density drawn per case: none, 30%, all, or by the base's rows (0, 30%
    and 100% in turn, so that some slices hold NaNs only); a complex NaN in
    either part or both; sometimes +-inf besides."""
    if kind(a.dtype) not in "fc":
        return a
    dt, base = case.bases[a.bi]
    base = np.array(base, copy=True)
    flat = base.reshape(-1)
    size = flat.size
    mode = pick(["none", "some", "all", "rows", "rows", "rows"])
    if mode == "none":
        mask = np.zeros(size, dtype=bool)
    elif mode == "some":
        mask = rng.random(size) < 0.3
    elif mode == "all":
        mask = np.ones(size, dtype=bool)
    else:
        rows = base.shape[0] if base.ndim else 1
        row = np.arange(size) // max(1, size // max(rows, 1))
        mask = rng.random(size) < np.array([0.0, 0.3, 1.0])[row % 3]
    if kind(dt) == "c":
        part = rng.integers(0, 3, size)  # 0: the real part, 1: the imaginary one, 2: both
        flat.real[mask & (part != 1)] = np.nan
        flat.imag[mask & (part != 0)] = np.nan
    else:
        flat[mask] = np.nan
    if rng.random() < 0.3:
        inf = ~mask & (rng.random(size) < 0.05)
        flat[inf] = np.where(rng.random(int(inf.sum())) < 0.5, np.inf, -np.inf)
    case.bases[a.bi] = (dt, base)
    return Arr(a.bi, a.dtype, a.layout, apply_layout(base, a.layout))


def reduction_case(op, dt):
    plain = op[3:] if op in NAN_REDUCTIONS else op
    big = rng.random() < 0.03  # past the 8192-element runs of the pairwise sums
    if big:
        shape = pick([(int(rng.integers(8200, 10000)),), (3, int(rng.integers(2740, 3300))),
                      (int(rng.integers(130, 200)), int(rng.integers(30, 60)))])
    else:
        shape = random_shape()
        if rng.random() < 0.1:
            shape = shape[:-1] + (0,) if shape else (0,)
    case = Case(op, "fn")
    if plain == "prod":  # factors near 1: long products neither overflow nor vanish
        base_shape, layout = layout_for(shape)
        count = int(np.prod(base_shape))
        vals = rng.uniform(0.6, 1.6, count) * rng.choice([1, -1], count)
        if dt in INTS or dt == "bool":
            vals = random_values(dt, count, "small")
        case.bases.append((dt, cast(vals, dt).reshape(base_shape)))
        a = Arr(0, dt, layout, apply_layout(case.bases[0][1], layout))
    else:
        a = case.array(dt, shape, "sum")
    if plain != op:
        a = with_nans(case, a)
    case.args.append(a)
    ndim = len(shape)
    # dims: all (default), one, or a list; 1-based, sometimes negative
    r = rng.random()
    if ndim == 0 or r < 0.3:
        axes = tuple(range(ndim))
        dim_opt = None
        if ndim and rng.random() < 0.3:
            dim_opt = list(range(1, ndim + 1))
    elif r < 0.7 or plain in ("argmin", "argmax"):
        d = int(rng.integers(0, ndim))
        axes = (d,)
        dim_opt = d + 1 if rng.random() < 0.7 else d - ndim
    else:
        axes = tuple(sorted(int(x) for x in rng.choice(ndim, int(rng.integers(1, ndim + 1)),
                                                       replace=False)))
        dim_opt = [d + 1 if rng.random() < 0.7 else d - ndim for d in axes]
        rng.shuffle(dim_opt)
    keepdims = rng.random() < 0.3
    dtype_opt, ddof = None, 0
    if plain in ("sum", "prod", "mean", "std", "var") and rng.random() < 0.25:
        dtype_opt = pick(["float32", "float64", "complex128", "float16"] if kind(dt) in "fc" else
                         ["int64", "int32", "uint8", "float32", "float64", "bfloat16"])
        if plain in ("std", "var") and kind(dt) in "biu":
            dtype_opt = "float64"  # squares of wide integers overflow float32, as in NumPy
        # a real dtype for complex input: nansum, nanprod and nanmean only (NumPy
        # replaces the NaN numbers, then drops the imaginary parts)
        if kind(dt) == "c" and kind(dtype_opt) != "c" and (op == plain or plain not in
                                                             ("sum", "prod", "mean")):
            dtype_opt = "complex64"
    if plain in ("std", "var") and rng.random() < 0.5:
        ddof = int(rng.integers(0, 3))
    opts = {}
    if dim_opt is not None:
        opts["dim"] = dim_opt
    if keepdims:
        opts["keepdims"] = True
    if dtype_opt:
        opts["dtype"] = dtype_opt
    if ddof:
        opts["ddof"] = ddof
    if list(opts) == ["dim"] and isinstance(dim_opt, int) and rng.random() < 0.5:
        case.args.append(Sca("i", dim_opt))  # a plain integer stands for {dim = n}
    elif opts or rng.random() < 0.2:
        case.args.append(Opt(**opts))
    case.form = "fn" if rng.random() < 0.5 else "m" + op
    case.known = half_dtype_bug(dtype_opt, [a])
    exact_sum = layout_is_plain(a) and (len(axes) == ndim or axes == (ndim - 1,))
    if plain in ("argmin", "argmax") and isinstance(dim_opt, list) and len(dim_opt) > 1:
        emit(case, "E:ARGUMENT")  # one dim, or all of them given as no dim at all
        return
    complex_rows = exact_sum and kind(dtype_opt or dt) == "c" and len(axes) < ndim
    for exact in ([False, True] if complex_rows else [exact_sum]):
        if complex_rows and exact:
            # known: complex row sums are not NumPy's bit for bit once there are
            # several rows; the bounded copy above keeps them checked meanwhile
            case.known = case.known or "complex_row_sum"
        try:
            reference = nan_reference if plain != op else reduce_reference
            rdt, values, cmp = reference(op, a.view, dt, axes, keepdims, dtype_opt, ddof, exact)
        except Fail as f:
            emit(case, "E:" + f.code)
            return
        values = np.asarray(values)
        if rdt != "bfloat16":
            values = values.astype(carrier(rdt))
        as_value = values.ndim == 0  # dlbridge returns any 0-d result as a Lua value
        if isinstance(cmp, str):
            emit(case, expect_value(rdt, values, cmp) if as_value else
                 expect_result(rdt, cmp, values))
        else:
            emit(case, expect_bounded(rdt, values, cmp, value=as_value))


def half_dtype_bug(dtype_opt, arrays):
    """The tag of a known bug: with dtype = float16 or bfloat16, dl.sum & co.
    and dl.matmul convert the elements to float32, not to that dtype (NumPy:
    np.sum(np.array([2049, 1], np.int32), dtype=np.float16) is 2048, dlbridge's
    2050)."""
    if dtype_opt not in ("float16", "bfloat16"):
        return None
    for a in arrays:
        if a.dtype == dtype_opt or a.view.size == 0:
            continue
        v = a.view.astype(np.complex128 if kind(a.dtype) == "c" else np.float64)
        rounded = cast(a.view, dtype_opt).astype(np.float64)
        if not np.array_equal(rounded, v.real, equal_nan=True):
            return "half_dtype_option"
    return None


def layout_is_plain(a):
    return a.layout == "-"


def cases_sum():
    for op in REDUCTIONS:
        for dt in DTYPES:
            for _ in sample([0, 1, 2]):
                reduction_case(op, dt)


def cases_nansum():
    for op in NAN_REDUCTIONS:
        for dt in DTYPES:
            for _ in sample([0, 1, 2] if kind(dt) in "fc" else [0]):
                reduction_case(op, dt)


def product_shapes():
    """Shapes of a and b for matmul: 1-D/2-D mixes, batches that broadcast, K = 0."""
    m, k, n = (int(rng.integers(1, 7)) for _ in range(3))
    if rng.random() < 0.05:
        k = 0
    if rng.random() < 0.05:
        m = 0
    r = rng.random()
    if r < 0.15:
        return (k,), (k,)
    if r < 0.25:
        return (k,), (k, n)
    if r < 0.35:
        return (m, k), (k,)
    if r < 0.75:
        return (m, k), (k, n)
    if r < 0.8:
        big = int(rng.integers(40, 90))
        return (big, big + 3), (big + 3, int(rng.integers(30, 70)))
    batch = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3)))]
    ba = tuple(1 if rng.random() < 0.3 else e for e in batch)
    bb = tuple(1 if rng.random() < 0.3 else e for e in batch)
    if rng.random() < 0.3:
        bb = bb[1:]
    return ba + (m, k), bb + (k, n)


def matmul_reference(x, y, xdt, ydt, r):
    """(values, bounds or "x") of x @ y in dtype r."""
    if kind(r) in "biu":
        acc = "uint64" if kind(r) == "u" else "int64"
        if r == "bool":
            return np.matmul(x.astype(bool), y.astype(bool)), "x"
        out = np.matmul(cast(x, r).astype(acc), cast(y, r).astype(acc))
        return np.asarray(out).astype(carrier(r)), "x"
    wide = np.clongdouble if kind(r) == "c" else np.longdouble
    xl, yl = cast(x, r).astype(wide), cast(y, r).astype(wide)
    out = np.matmul(xl, yl)
    k = x.shape[-1] if x.ndim else 1
    acc = "float32" if r in ("float16", "bfloat16") else {"complex64": "float32",
                                                          "complex128": "float64"}.get(r, r)
    mag = np.matmul(np.abs(xl).astype(np.float64), np.abs(yl).astype(np.float64))
    err = (2 * k + 4) * EPS[acc] * mag
    bounds = bound_for(r, cast(out, r), err, 2 * k)
    # Where the sum of |x||y| passes the accumulator's range, a partial sum
    # may overflow (NumPy's own float32 loops do too): any result matches.
    overflow = mag > np.finfo(np.dtype(acc)).max
    return cast(out, r), np.where(overflow, np.inf, bounds)


def matmul_case(xdt, ydt):
    sa, sb = product_shapes()
    case = Case("matmul", "fn")
    a, b = case.array(xdt, sa, "sum"), case.array(ydt, sb, "sum")
    case.args = [a, b]
    r = promote(xdt, ydt)
    opts = {}
    if rng.random() < 0.1:
        opts["dtype"] = pick(DTYPES)
    if opts or rng.random() < 0.1:
        case.args.append(Opt(**opts))
    case.form = pick(["fn", "mmatmul"])
    if "dtype" in opts:
        if not (can_cast_same_kind(xdt, opts["dtype"]) and can_cast_same_kind(ydt, opts["dtype"])):
            emit(case, "E:DTYPE")
            return
        r = opts["dtype"]
        case.known = half_dtype_bug(r, [a, b])
    x, y = a.view, b.view
    va = x if x.ndim > 1 else x.reshape(1, -1)
    vb = y if y.ndim > 1 else y.reshape(-1, 1)
    values, cmp = matmul_reference(va, vb, xdt, ydt, r)
    values = np.asarray(values)
    if x.ndim == 1:
        values = values[..., 0, :] if y.ndim > 1 else values[..., 0, 0]
        if not isinstance(cmp, str):
            cmp = cmp[..., 0, :] if y.ndim > 1 else cmp[..., 0, 0]
    elif y.ndim == 1:
        values = values[..., 0]
        if not isinstance(cmp, str):
            cmp = cmp[..., 0]
    if isinstance(cmp, str):
        emit(case, expect_result(r, cmp, np.array(values)))
    else:
        emit(case, expect_bounded(r, values, cmp))


def dot_case(xdt, ydt):
    """dl.dot: N-D a with N-D b (every a-row meets every b-matrix)."""
    k = int(rng.integers(1, 5))
    sa = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))) + (k,)
    sb = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 2))))
    sb = sb + (k, int(rng.integers(1, 4))) if sb or rng.random() < 0.7 else (k,)
    case = Case("dot", pick(["fn", "mdot"]))
    a, b = case.array(xdt, sa, "sum"), case.array(ydt, sb, "sum")
    case.args = [a, b]
    r = promote(xdt, ydt)
    if kind(r) in "biu":
        acc = "uint64" if kind(r) == "u" else "int64"
        if r == "bool":
            out = np.dot(a.view.astype(bool), b.view.astype(bool))
        else:
            out = np.asarray(np.dot(cast(a.view, r).astype(acc), cast(b.view, r).astype(acc)))
            out = out.astype(carrier(r))
        emit(case, expect_result(r, "x", np.array(out)))
        return
    wide = np.clongdouble if kind(r) == "c" else np.longdouble
    xl, yl = cast(a.view, r).astype(wide), cast(b.view, r).astype(wide)
    out = np.dot(xl, yl)
    acc = "float32" if r in ("float16", "bfloat16") else {"complex64": "float32",
                                                          "complex128": "float64"}.get(r, r)
    mag = np.dot(np.abs(xl).astype(np.float64), np.abs(yl).astype(np.float64))
    bounds = bound_for(r, cast(out, r), (2 * k + 4) * EPS[acc] * mag, 2 * k)
    overflow = mag > np.finfo(np.dtype(acc)).max  # as in matmul_reference
    emit(case, expect_bounded(r, cast(out, r), np.where(overflow, np.inf, bounds)))


def cases_matmul():
    for xdt in DTYPES:
        for ydt in sample(DTYPES):
            matmul_case(xdt, ydt)
        for ydt in sample([pick(DTYPES)]):
            dot_case(xdt, ydt)
    for bad in [((2, 3), (4, 2)), ((), (3,)), ((2, 2, 3), (3, 3, 2))]:
        case = Case("matmul", "fn")
        case.args = [case.array("float32", bad[0]), case.array("float32", bad[1])]
        emit(case, "E:SHAPE")


def join_case(op, dtypes):
    stack = op == "stack"
    base = random_shape()
    if not stack and not base:
        base = (int(rng.integers(1, 4)),)
    ndim = len(base)
    d = int(rng.integers(0, ndim + (1 if stack else 0))) if ndim or stack else 0
    case = Case(op, "fn")
    arrays = []
    for dt in dtypes:
        shape = list(base)
        if not stack:
            shape[d] = int(rng.integers(0, 4))
        arrays.append(case.array(dt, tuple(shape)))
    case.args.append(Lst(arrays))
    if rng.random() < 0.7 or d != 0:
        dim = d + 1 if rng.random() < 0.6 else d - (ndim + (1 if stack else 0))
        case.args.append(Sca("i", dim))
    r = dtypes[0]
    for dt in dtypes[1:]:
        r = promote(r, dt)
    vals = [cast(a.view, r) for a in arrays]
    out = np.stack(vals, axis=d) if stack else np.concatenate(vals, axis=d)
    emit(case, expect_result(r, "x", np.array(out)))


def join_errors(op):
    for shapes, dim, code in [([(2, 3), (3, 3)], 2, "SHAPE"), ([(2, 3), (2, 3)], 4, "INDEX"),
                              ([(), ()], None, "SHAPE" if op == "concat" else None),
                              ([], None, "ARGUMENT")]:
        if code is None:
            continue
        case = Case(op, "fn")
        if op == "stack" and shapes == [(2, 3), (3, 3)]:
            dim = 1
        case.args.append(Lst([case.array("float32", s) for s in shapes]))
        if dim is not None:
            case.args.append(Sca("i", dim))
        emit(case, "E:" + code)


def cases_concat():
    for _ in sample(range(60)):
        join_case("concat", [pick(DTYPES) for _ in range(int(rng.integers(1, 4)))])
    join_errors("concat")


def cases_stack():
    for _ in sample(range(60)):
        join_case("stack", [pick(DTYPES) for _ in range(int(rng.integers(1, 4)))])
    join_errors("stack")


def sample(items):
    """The grid at FRACTION: each item floor(FRACTION) times, once more with
    the probability of the fraction's remainder."""
    whole = int(math.floor(FRACTION))
    out = []
    for x in items:
        out += [x] * (whole + (rng.random() < FRACTION - whole))
    return out


def main():
    for op in BINARY:
        pairs = [(a, b) for a in DTYPES for b in DTYPES]
        for a, b in sample(pairs):
            elementwise_case(op, (a, b), 2)
        for dt in DTYPES:
            for side in sample([0, 1, 0, 1]):
                dts = (None, dt) if side == 0 else (dt, None)
                elementwise_case(op, dts, 2)
            if rng.random() < FRACTION * 0.5:
                overlap_case(op, dt, 2)
    for op in UNARY:
        for dt in DTYPES:
            for _ in sample([0, 1, 2, 3]):
                elementwise_case(op, (dt,), 1)
            if rng.random() < FRACTION * 0.5:
                overlap_case(op, dt, 1)
    for x in DTYPES:
        for y in sample(DTYPES):
            where_case(DTYPES[int(rng.integers(0, len(DTYPES)))], x, y)
        for _ in sample([0, 1]):
            where_case(x, None if rng.random() < 0.5 else x, None)
        for bound in sample([x, None, None, DTYPES[int(rng.integers(0, len(DTYPES)))]]):
            clip_case(x, bound)
    error_cases()
    # Reductions, matmul/dot, concat/stack: the groups compute_check.lua finds in dl.
    for feature in sorted(FEATURES):
        hook = globals().get("cases_" + feature)
        if hook:
            hook()
    regression_cases()  # last: one of them stops a sanitizer build until its bug is fixed
    try:
        for line in CASES:
            print(line)
    except BrokenPipeError:  # compute_check.lua stopped early (a crash): it reports that
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


main()
