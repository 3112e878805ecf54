"""bench/bulk_numpy.py: NumPy's side of bench/bulk.lua, alternated with it case
by case (bench/numpy_support.py).

Run by bench/bulk.lua under /usr/bin/python3 (Debian's python3-numpy) with its
sizes. Each case makes its data when it starts and drops it when done, as
bulk.lua's (the pair table's sources a source dtype at a time). The value
loop_peak_rss_growth is the growth of the peak RSS (VmHWM, bytes) over the
RSS when the loop case started. The names match bench/bulk.lua's.
"""
import warnings

import numpy as np

import numpy_support as ns

P = ns.params(BIG=32 * 1024 * 1024, N=10_000_000, LOOP=2000, SIDE=4096, PAIRS_N=1_000_000,
              PAIRS=1)
BIG, N, LOOP, SIDE, PAIRS_N = P["BIG"], P["N"], P["LOOP"], P["SIDE"], P["PAIRS_N"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def case(name, reps=1, warmups=1):
    """Registers the decorated maker as case `name`."""
    def register(make):
        ns.case(name, make=make, reps=reps, warmups=warmups)
        return make
    return register


@case("zeros_256MiB", reps=20)
def _():
    return lambda: np.zeros(BIG)


@case("zeros_fill_64MiB")
def _():
    return lambda: np.zeros(BIG // 4).fill(1.5)


@case("empty_fill_256MiB")
def _():
    return lambda: np.empty(BIG).fill(1.5)


@case("copy_256MiB")
def _():
    full = np.ones(BIG)
    return full.copy


@case("fill_1e7")
def _():
    v = np.empty(N)
    return lambda: v.fill(2.5)


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return -1


rss_before = [-1]


@case("loop_2000x8MiB", warmups=0)
def _():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss_before[0] = status("VmRSS")
    except OSError:
        pass

    def loop():
        for _ in range(LOOP):
            c = np.empty(1024 * 1024)
            c.fill(1.0)
    return loop


ns.value("loop_peak_rss_growth",
         lambda: status("VmHWM") - rss_before[0] if rss_before[0] >= 0 else "-")


@case("transpose_contiguous")
def _():
    sq = np.ones((SIDE, SIDE), dtype=np.float32)
    return lambda: np.ascontiguousarray(sq.T)


@case("transpose_copy_from")
def _():
    sq = np.ones((SIDE, SIDE), dtype=np.float32)
    dst = np.empty((SIDE, SIDE), dtype=np.float32)
    return lambda: np.copyto(dst, sq.T)


@case("astype_f64_f32")
def _():
    src64 = np.ones(N)
    return lambda: src64.astype(np.float32)


if P["PAIRS"]:
    np.seterr(all="ignore")
    warnings.simplefilter("ignore", np.ComplexWarning)  # complex -> real drops the imaginary part
    sources = {}  # the arrays of one source dtype at a time

    def source(s, strided):
        if s not in sources:
            sources.clear()
            sources[s] = (np.ones(PAIRS_N, dtype=s), np.ones(2 * PAIRS_N, dtype=s)[::2])
        return sources[s][strided]

    def pair(s, d, strided):
        def make():
            x = source(s, strided)
            return lambda: x.astype(d)
        return make

    for s in DTYPES:
        for d in DTYPES:
            ns.case(f"astype_{s}_{d}", make=pair(s, d, 0))
            ns.case(f"astype_strided_{s}_{d}", make=pair(s, d, 1))
ns.serve()
