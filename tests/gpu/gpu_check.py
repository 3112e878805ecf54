"""The hardware check of dlbridge's cuda backend (run it as tests/gpu/run).

Python drives a lua_State through ctypes (tests/interop/lua_ctypes.py and
test_numpy.py's helpers): no Lua needs to be installed, only carried in the
build's lib/ (see tests/gpu/README). Parts:
  1. spec/cuda_spec.lua, run by tests/gpu/mini_busted.lua (busted is absent);
  2. interop both ways with PyTorch, CuPy and JAX (hardware only);
  3. bandwidth: 1 GiB H2D (pageable, pinned), D2H, D2D, dlbridge against
     PyTorch in the same run, and the per-call cost of an export + import.
Exit codes: 0 all passed, 1 a failure, 77 no GPU (or no driver), 2 usage.
"""
import argparse
import ctypes
import gc
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
NO_GPU = 77


class Report:
    """The full log (a file) and the parts of the one summary line."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "w")
        self.parts, self.failed = [], []

    def log(self, text):
        self.file.write(text + "\n")
        self.file.flush()

    def part(self, text):
        self.parts.append(text)
        self.log("== " + text)

    def fail(self, what, detail=""):
        self.failed.append(what)
        self.log("FAIL " + what + (("\n" + detail) if detail else ""))

    def check(self, what, cond, detail=""):
        if cond:
            self.log("ok   " + what)
        else:
            self.fail(what, detail)
        return cond


def cuda_devices(path):
    """(count, None) from the driver at path, or (0, reason)."""
    try:
        cu = ctypes.CDLL(path)
    except OSError as e:
        return 0, "cannot load the CUDA driver %s (%s)" % (path, e)
    n = ctypes.c_int(0)
    st = cu.cuInit(0)
    if st != 0:
        return 0, "cuInit failed with CUresult %d" % st
    st = cu.cuDeviceGetCount(ctypes.byref(n))
    if st != 0 or n.value == 0:
        return 0, "no CUDA device (cuDeviceGetCount: %d, %d devices)" % (st, n.value)
    return n.value, None


def find_stand_in(build):
    path = os.environ.get("DLB_CUDA_DRIVER") or os.path.join(build, "lib", "libdlb_cuda_standin.so")
    return path if os.path.exists(path) else None


# ---- part 1: the specs -------------------------------------------------------

NOT_APPLICABLE = r"""
local devices = ...
return function(err, name)
  if type(err) == "table" and err.standin_only then return "needs the stand-in driver: " .. err.what end
  if type(err) == "table" and (err.code == "UNKNOWN_DEVICE" or err.code == "DEVICE_UNAVAILABLE")
     and devices < 2 and tostring(err):find("cuda:1", 1, true) then
    return "needs a second GPU"
  end
  if devices ~= 2 and name:find("lists cuda as available", 1, true) and tostring(err):find("2") then
    return "the stand-in has 2 devices, this machine " .. devices
  end
end
"""


def run_specs(state, rep, hardware, devices, build):
    """spec/cuda_spec.lua through mini_busted in state; returns its counts."""
    lib = os.path.join(build, "lib")
    setup = ("package.path = %r .. package.path package.cpath = %r .. package.cpath"
             % ("%s/tests/gpu/?.lua;%s/spec/?.lua;" % (ROOT, ROOT), "%s/?.so;" % lib))
    state.run(setup)
    if hardware:
        # The spec picks its driver branch by DLB_CUDA_DRIVER's name; on
        # hardware it runs the loaded-driver branch against libcuda.so.1 and
        # the shim of tests/gpu/hw_stand_in.lua.
        state.run("HW_STAND_IN_LIB = %r package.loaded.cuda_stand_in = require 'hw_stand_in' "
                  "local getenv = os.getenv "
                  "os.getenv = function(k) if k == 'DLB_CUDA_DRIVER' then return 'libcuda.so.1 "
                  "(hardware: the standin branch)' end return getenv(k) end"
                  % os.path.join(lib, "cuda_stand_in.so"))
    state.run("NA = load(%r)(%d)" % (NOT_APPLICABLE, devices))
    ok, fails, errs, pend, na, log = state.run(
        "local r = require('mini_busted').run{files = {%r}, not_applicable = NA} "
        "return r.successes, r.failures, r.errors, r.pendings, r.skipped, r.log"
        % os.path.join(ROOT, "spec", "cuda_spec.lua"), results=6)
    if hardware:
        state.run("os.getenv = require('os').getenv")
    rep.log(log)
    summary = "specs %d/%d" % (ok, ok + fails + errs) + (" (%d n/a)" % na if na else "")
    rep.part(summary)
    if fails or errs:
        rep.fail("spec/cuda_spec.lua: %d failures, %d errors" % (fails, errs))
    return ok, fails, errs


# ---- part 3: bandwidth --------------------------------------------------------

def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def dlbridge_bandwidth(state, nbytes, reps, pinned_src=None):
    """GB/s of dlbridge's H2D (pageable), D2H, D2D; H2D pinned when the
    state already holds `pinned` (a cpu array over pinned memory)."""
    state.run("host = dl.zeros(%d, {dtype = 'uint8'}) host:fill(3) "
              "dev = dl.device_put(host, 'cuda:0') dl.synchronize('cuda:0')" % nbytes)
    gb = nbytes / 1e9
    out = {}

    def h2d():
        state.run("local d = dl.device_put(host, 'cuda:0') dl.synchronize('cuda:0') d:delete()")

    def h2d_pinned():
        state.run("local d = dl.device_put(pinned, 'cuda:0') dl.synchronize('cuda:0') d:delete()")

    def d2h():
        state.run("local h = dl.device_put(dev, 'cpu') h:delete()")

    def d2d():
        state.run("local d = dl.device_put(dev, 'cuda:0', {copy = true}) dl.synchronize('cuda:0') d:delete()")

    out["h2d"] = gb / best_time(h2d, reps)
    if pinned_src:
        out["h2d_pinned"] = gb / best_time(h2d_pinned, reps)
    out["d2h"] = gb / best_time(d2h, reps)
    out["d2d"] = 2 * gb / best_time(d2d, reps)  # read + write, as bandwidth tools count it
    state.run("host = nil dev = nil collectgarbage()")
    return out


def round_trip_us(state, n):
    """Per-call cost of a:to_dlpack() + dl.from_dlpack in Lua on cuda:0 (with
    the default stream ordering: an event record and a wait)."""
    state.run("rt = dl.zeros(16, {dtype = 'float32', device = 'cuda:0'})")
    t0 = time.perf_counter()
    state.run("for i = 1, %d do local b = dl.from_dlpack(rt:to_dlpack()) end" % n)
    return (time.perf_counter() - t0) / n * 1e6


def torch_bandwidth(torch, nbytes, reps):
    gb = nbytes / 1e9
    host = torch.full((nbytes,), 3, dtype=torch.uint8)
    pinned = host.pin_memory()
    dev = host.to("cuda")
    sync = torch.cuda.synchronize
    out = {}
    out["h2d"] = gb / best_time(lambda: (host.to("cuda"), sync()), reps)
    out["h2d_pinned"] = gb / best_time(lambda: (pinned.to("cuda"), sync()), reps)
    out["d2h"] = gb / best_time(lambda: dev.to("cpu"), reps)
    out["d2d"] = 2 * gb / best_time(lambda: (dev.clone(), sync()), reps)
    return out, pinned


def bandwidth(state, rep, hardware, torch, stand_in_bytes):
    from interop_gpu import push_torch  # noqa: local helper module
    nbytes = (1 << 30) if hardware else stand_in_bytes
    reps = 5 if hardware else 2
    theirs, pinned = ({}, None)
    if hardware and torch:
        theirs, pinned = torch_bandwidth(torch, nbytes, reps)
        push_torch(state, "pinned", pinned)  # zero-copy: dlbridge copies from pinned memory
    ours = dlbridge_bandwidth(state, nbytes, reps, pinned_src=pinned)
    goal = float(os.environ.get("DLB_GPU_BW_GOAL", "0.9"))
    words = []
    for k, v in ours.items():
        line = "bandwidth %s: dlbridge %.1f GB/s" % (k, v)
        if k in theirs:
            ratio = v / theirs[k]
            line += ", torch %.1f GB/s, %.2fx" % (theirs[k], ratio)
            words.append("%s %.2fx" % (k, ratio))
            if ratio < goal:
                rep.fail("bandwidth %s %.2fx below the goal %.2fx" % (k, ratio, goal))
        else:
            words.append("%s %.1fGB/s" % (k, v))
        rep.log(line)
    if hardware and not torch:
        words.append("(torch absent: no comparison)")
    us = round_trip_us(state, 20000 if hardware else 2000)
    rep.log("export + import round trip in Lua: %.2f us per call" % us)
    words.append("rt %.1fus" % us)
    rep.part("bw " + " ".join(words))


# ---- main ------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(prog="tests/gpu/run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry", action="store_true", help="check what is carried and detect the GPU; run nothing")
    ap.add_argument("--stand-in", action="store_true",
                    help="run the specs and dlbridge's benchmark against the stand-in driver "
                         "(DLB_CUDA_DRIVER, default BUILD/lib/libdlb_cuda_standin.so)")
    ap.add_argument("--build", default=os.environ.get("DLBRIDGE_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--log", default=None, help="the full log (default BUILD/gpu-check.log)")
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    os.environ["DLBRIDGE_BUILD"] = build
    log_path = os.path.abspath(args.log or os.path.join(build, "gpu-check.log"))

    carried = [os.path.join(build, "lib", f) for f in ("libdlbridge.so", "libdlb_interop_capsule.so")]
    missing = [p for p in carried if not os.path.exists(p)]
    if missing:
        print("tests/gpu/run: FAIL: the build at %s lacks %s (build it: cmake -S . -B build && "
              "cmake --build build)" % (build, ", ".join(missing)))
        return 1

    if args.stand_in:
        driver = find_stand_in(build)
        if not driver:
            print("tests/gpu/run: FAIL: --stand-in: no stand-in driver (set DLB_CUDA_DRIVER)")
            return 1
        os.environ["DLB_CUDA_DRIVER"] = driver
    else:
        driver = os.environ.get("DLB_CUDA_DRIVER", "libcuda.so.1")
    devices, why = cuda_devices(driver)
    if not devices:
        print("tests/gpu/run: NO GPU: %s; nothing was tested (exit %d). On a machine without a "
              "GPU, `tests/gpu/run --stand-in` exercises this script against the stand-in driver."
              % (why, NO_GPU))
        return NO_GPU
    hardware = not args.stand_in
    if args.dry:
        print("tests/gpu/run --dry: %d CUDA device(s) through %s; build %s; would run %s"
              % (devices, driver, build, "specs, interop, bandwidth" if hardware
                 else "specs and dlbridge's bandwidth (stand-in)"))
        return 0

    t_start = time.perf_counter()
    rep = Report(log_path)
    rep.log("tests/gpu/run: driver %s, %d device(s), build %s, %s" % (driver, devices, build,
            "hardware" if hardware else "stand-in"))
    sys.path[:0] = [HERE, os.path.join(ROOT, "tests", "interop")]
    try:
        from test_numpy import Lua  # loads liblua (BUILD/lib first) and libdlbridge
    except Exception:  # noqa: a missing library is a failure with its reason
        print("tests/gpu/run: FAIL: cannot load Lua/dlbridge through ctypes:\n" + traceback.format_exc())
        return 1
    torch = None
    if hardware:
        try:
            import torch as _torch
            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            torch = None

    state = Lua()
    try:
        run_specs(state, rep, hardware, devices, build)
    except Exception:
        rep.fail("part 1 (specs) raised", traceback.format_exc())
    state.close()
    gc.collect()

    if hardware:
        import interop_gpu
        try:
            interop_gpu.run_all(Lua, rep)
        except Exception:
            rep.fail("part 2 (interop) raised", traceback.format_exc())

    state = Lua()
    try:
        bandwidth(state, rep, hardware, torch, 64 << 20)
    except Exception:
        rep.fail("part 3 (bandwidth) raised", traceback.format_exc())
    state.close()
    gc.collect()

    secs = time.perf_counter() - t_start
    verdict = "PASS" if not rep.failed else "FAIL (%d: %s)" % (len(rep.failed), "; ".join(rep.failed[:3]))
    line = "tests/gpu/run %s: %s | %s | %.0fs | log %s" % (
        "hardware" if hardware else "stand-in", verdict, " | ".join(rep.parts), secs, log_path)
    rep.log(line)
    rep.file.close()
    print(line)
    return 0 if not rep.failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
