"""The hardware check of dlbridge's cuda backend (run it as tests/gpu/run, or
on a GPU machine's bare copy of the tree as tests/gpu/oneshot).

Python drives a lua_State through ctypes (tests/interop/lua_ctypes.py and
test_numpy.py's helpers): no Lua, busted, NumPy, compiler or CMake needs to
be installed, only the build's lib/ (or tests/gpu/pack's bundle, which
carries liblua5.4 and the libraries dlbridge links). Parts:
  1. spec/cuda_spec.lua, run by tests/gpu/mini_busted.lua. On hardware the
     module cuda_stand_in is tests/gpu/hw_stand_in.lua: its foreign
     producer and consumer use the driver's ordinary entry points only;
     what needs the stand-in's controls or two devices is n/a, with why;
  2. interop both ways with PyTorch, CuPy and JAX (hardware only), each
     probed first (tests/gpu/peers.py): present, CPU-only or absent;
  3. bandwidth: H2D (pageable, pinned), D2H and D2D copies into arrays
     allocated before the timing starts, dlbridge and PyTorch alike (1 GiB;
     no allocation or free is timed), and the per-call cost of an export +
     import.
The driver is the backend's: DLB_CUDA_DRIVER when set, else libcuda.so.1.
A libcuda.so.1 that is the stand-in of tests/cuda (it exports
standin_control) runs the hardware path as a simulation, with small sizes.
Exit codes: 0 all passed, 1 a failure, 77 no GPU (or no driver), 2 usage.
"""
import argparse
import ctypes
import faulthandler
import gc
import os
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
NO_GPU = 77
sys.path[:0] = [HERE]
import peers as peers_mod  # noqa: E402 (tests/gpu/peers.py: sets XLA_PYTHON_CLIENT_PREALLOCATE)


class Report:
    """The full log (a file) and the parts of the one summary line; each
    failure counts against the part that is running."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "w")
        self.parts, self.failed = [], []
        self.current, self.part_failures = None, 0

    def log(self, text):
        self.file.write(text + "\n")
        self.file.flush()

    def begin(self, name):
        self.current, self.part_failures = name, 0
        self.log("== part %s" % name)

    def end(self, text):
        status = "ok" if not self.part_failures else "FAIL(%d)" % self.part_failures
        self.parts.append("%s %s: %s" % (self.current, status, text))
        self.log("== %s" % self.parts[-1])
        self.current = None

    def info(self, name, text):
        """A part that cannot fail (what was found)."""
        self.parts.append("%s: %s" % (name, text))
        self.log("== %s" % self.parts[-1])

    def fail(self, what, detail=""):
        self.failed.append(what)
        self.part_failures += 1
        self.log("FAIL " + what + (("\n" + detail) if detail else ""))

    def check(self, what, cond, detail=""):
        if cond:
            self.log("ok   " + what)
        else:
            self.fail(what, detail)
        return cond


def loaded_file(name):
    """The path of the loaded library whose file name is name (/proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                if path and os.path.basename(path) == name:
                    return path
    except OSError:
        pass
    return None


def driver_info(path):
    """(devices, (description, short form), is_stand_in, reason) of the
    driver at path, opened as the backend opens it."""
    try:
        cu = ctypes.CDLL(path)
    except OSError as e:
        return 0, None, False, "cannot load the CUDA driver %s (%s)" % (path, e)
    stand_in = hasattr(cu, "standin_control")
    n, v = ctypes.c_int(0), ctypes.c_int(0)
    st = cu.cuInit(0)
    if st != 0:
        return 0, None, stand_in, "cuInit failed with CUresult %d" % st
    st = cu.cuDeviceGetCount(ctypes.byref(n))
    if st != 0 or n.value == 0:
        return 0, None, stand_in, "no CUDA device (cuDeviceGetCount: %d, %d devices)" % (st, n.value)
    cu.cuDriverGetVersion(ctypes.byref(v))
    names = []
    if hasattr(cu, "cuDeviceGetName"):
        for i in range(n.value):
            d, buf = ctypes.c_int(0), ctypes.create_string_buffer(256)
            if cu.cuDeviceGet(ctypes.byref(d), i) == 0 and cu.cuDeviceGetName(buf, 256, d) == 0:
                names.append(buf.value.decode(errors="replace"))
    where = loaded_file(os.path.basename(path)) or path
    short = "CUDA %d.%d, %d device(s)%s%s" % (
        v.value // 1000, v.value % 1000 // 10, n.value, (": " + ", ".join(names)) if names else "",
        ", the stand-in of tests/cuda" if stand_in else "")
    desc = "%s (%s), %s" % (path, where, short)
    return n.value, (desc, short), stand_in, None


def find_stand_in(build):
    path = os.environ.get("DLB_CUDA_DRIVER") or os.path.join(build, "lib", "libdlb_cuda_standin.so")
    return path if os.path.exists(path) else None


# ---- part 1: the specs -------------------------------------------------------

# A spec's error that means "cannot run here" (n/a, with the reason) rather
# than a failure; the error, then its err.cause, and so on (a producer's
# error reaches dlbridge's caller as err.cause of an ARGUMENT error).
NOT_APPLICABLE = r"""
local devices = ...
local function field(e, k)
  local ok, v = pcall(function() return e[k] end)
  return ok and v or nil
end
return function(err, name)
  local seen = {}
  local e = err
  while type(e) == "table" and not seen[e] do
    seen[e] = true
    if field(e, "standin_only") then return "needs the stand-in driver: " .. tostring(field(e, "what")) end
    local code = field(e, "code")
    if (code == "UNKNOWN_DEVICE" or code == "DEVICE_UNAVAILABLE") and devices < 2
       and tostring(e):find("cuda:1", 1, true) then
      return "needs a second GPU"
    end
    e = field(e, "cause")
  end
end
"""


def run_specs(state, rep, hardware, devices, build):
    """spec/cuda_spec.lua through mini_busted in state."""
    rep.begin("specs")
    lib = os.path.join(build, "lib")
    setup = ("package.path = %r .. package.path package.cpath = %r .. package.cpath"
             % ("%s/tests/gpu/?.lua;%s/spec/?.lua;" % (ROOT, ROOT), "%s/?.so;" % lib))
    state.run(setup)
    if hardware:
        # The driver's ordinary entry points only (tests/gpu/hw_stand_in.lua);
        # the spec sees `hardware` and keeps the stand-in's checks to itself.
        state.run("HW_STAND_IN_LIB = %r package.loaded.cuda_stand_in = require 'hw_stand_in'"
                  % os.path.join(lib, "cuda_stand_in.so"))
    state.run("NA = load(%r)(%d)" % (NOT_APPLICABLE, devices))
    # Each spec's name on stderr as it starts: a hang's stacks come with it.
    ok, fails, errs, pend, na, log = state.run(
        "local r = require('mini_busted').run{files = {%r}, not_applicable = NA, "
        "started = function(name) io.stderr:write('spec: ', name, '\\n') io.stderr:flush() end} "
        "return r.successes, r.failures, r.errors, r.pendings, r.skipped, r.log"
        % os.path.join(ROOT, "spec", "cuda_spec.lua"), results=6)
    rep.log(log)
    not_here = [line for line in log.splitlines() if line.startswith(("pending ", "n/a "))]
    if not_here:
        rep.log("not run here (%d), each with its reason:\n  " % len(not_here) + "\n  ".join(not_here))
    if fails or errs:
        rep.fail("spec/cuda_spec.lua: %d failures, %d errors" % (fails, errs))
    rep.end("%d/%d" % (ok, ok + fails + errs) + (" (%d n/a)" % (pend + na) if pend + na else ""))


# ---- part 3: bandwidth --------------------------------------------------------
# Both sides copy between arrays allocated before the clock starts, and each
# timed run ends with the device synchronised: the bytes moved, nothing else.

def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def dlbridge_bandwidth(state, rep, nbytes, reps, pinned):
    """GB/s of dlbridge's H2D (pageable; pinned when the state holds the cpu
    array `pinned` over pinned memory), D2H (pageable) and D2D."""
    state.run("bw_host = dl.zeros(%d, {dtype = 'uint8'}) bw_host:fill(3) "
              "bw_out = dl.zeros(%d, {dtype = 'uint8'}) "
              "bw_dev = dl.zeros(%d, {dtype = 'uint8', device = 'cuda:0'}) "
              "bw_dev2 = dl.zeros(%d, {dtype = 'uint8', device = 'cuda:0'}) "
              "dl.synchronize('cuda:0')" % (nbytes, nbytes, nbytes, nbytes))
    gb = nbytes / 1e9
    runs = {
        "h2d": "bw_dev:copy_from(bw_host) dl.synchronize('cuda:0')",
        "h2d_pinned": "bw_dev:copy_from(pinned) dl.synchronize('cuda:0')",
        "d2h": "bw_out:copy_from(bw_dev) dl.synchronize('cuda:0')",
        "d2d": "bw_dev2:copy_from(bw_dev) dl.synchronize('cuda:0')",
    }
    out = {}
    for k in ("h2d", "h2d_pinned", "d2h", "d2d"):
        if k == "h2d_pinned" and not pinned:
            continue
        code = runs[k]
        out[k] = (2 if k == "d2d" else 1) * gb / best_time(lambda c=code: state.run(c), reps)
    # The copies moved the right bytes (ends and middle of each destination).
    probe = ("local n = %d for _, a in ipairs{bw_out, bw_dev2} do for _, i in ipairs{1, n // 2, n} do "
             "if a[i] ~= 3 then return false end end end return true" % nbytes)
    rep.check("bandwidth: the copies' bytes arrived", state.eval("(function() %s end)()" % probe))
    state.run("bw_host, bw_out, bw_dev, bw_dev2, pinned = nil collectgarbage() collectgarbage()")
    return out


def torch_bandwidth(torch, nbytes, reps):
    """PyTorch's GB/s for the same copies; its tensors are made first, and
    each timed run ends with torch.cuda.synchronize(). Returns the GB/s and
    the pinned tensor (dlbridge copies from it too)."""
    gb = nbytes / 1e9
    host = torch.full((nbytes,), 3, dtype=torch.uint8)
    pinned = host.pin_memory()
    out_host = torch.zeros_like(host)
    dev = torch.zeros(nbytes, dtype=torch.uint8, device="cuda")
    dev2 = torch.zeros_like(dev)
    sync = torch.cuda.synchronize
    sync()
    out = {}
    out["h2d"] = gb / best_time(lambda: (dev.copy_(host), sync()), reps)
    out["h2d_pinned"] = gb / best_time(lambda: (dev.copy_(pinned), sync()), reps)
    out["d2h"] = gb / best_time(lambda: (out_host.copy_(dev), sync()), reps)
    out["d2d"] = 2 * gb / best_time(lambda: (dev2.copy_(dev), sync()), reps)
    del host, out_host, dev, dev2
    gc.collect()
    torch.cuda.empty_cache()
    return out, pinned


def round_trip_us(state, n):
    """Per-call cost of a:to_dlpack() + dl.from_dlpack in Lua on cuda:0 (with
    the default stream ordering: an event record and a wait)."""
    state.run("rt = dl.zeros(16, {dtype = 'float32', device = 'cuda:0'})")
    t0 = time.perf_counter()
    state.run("for i = 1, %d do local b = dl.from_dlpack(rt:to_dlpack()) end" % n)
    us = (time.perf_counter() - t0) / n * 1e6
    state.run("rt = nil collectgarbage()")
    return us


def bandwidth(state, rep, full, torch_peer, nbytes, reps):
    """full: a GPU (1 GiB copies against PyTorch's when it has CUDA);
    otherwise the stand-in (dlbridge's side only, small)."""
    from interop_gpu import push_torch  # noqa: local helper module
    rep.begin("bw")
    theirs, pinned = {}, None
    if torch_peer is not None and torch_peer.usable:
        theirs, pinned = torch_bandwidth(torch_peer.module, nbytes, reps)
        push_torch(state, "pinned", pinned)  # zero-copy: dlbridge copies from pinned memory
    ours = dlbridge_bandwidth(state, rep, nbytes, reps, pinned is not None)
    del pinned
    goal = float(os.environ.get("DLB_GPU_BW_GOAL", "0.9"))
    rep.log("bandwidth: %d bytes, best of %d, copies into preallocated arrays, goal %.2fx PyTorch"
            % (nbytes, reps, goal))
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
    if full and not theirs:
        words.append("(no comparison: %s)" % (torch_peer.line() if torch_peer else "torch not probed"))
    us = round_trip_us(state, 20000 if full else 2000)
    rep.log("export + import round trip in Lua: %.2f us per call" % us)
    words.append("rt %.1fus" % us)
    rep.end(" ".join(words))


# ---- main ------------------------------------------------------------------

def watchdog(deadline):
    """A hang prints every thread's Python stack: on a fatal signal, on
    SIGTERM (the outer timeout), and after `deadline` seconds (then exit 1)."""
    faulthandler.enable(all_threads=True)
    try:
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    except (AttributeError, ValueError, RuntimeError):
        pass
    if deadline > 0:
        faulthandler.dump_traceback_later(deadline, exit=True)


def main(argv):
    ap = argparse.ArgumentParser(prog="tests/gpu/run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry", action="store_true", help="check what is carried and detect the GPU; run nothing")
    ap.add_argument("--stand-in", action="store_true",
                    help="run the specs and dlbridge's benchmark against the stand-in driver "
                         "(DLB_CUDA_DRIVER, default BUILD/lib/libdlb_cuda_standin.so)")
    ap.add_argument("--build", default=os.environ.get("DLBRIDGE_BUILD", os.path.join(ROOT, "build")),
                    help="the build directory, or tests/gpu/pack's bundle (its lib/ is what is loaded)")
    ap.add_argument("--log", default=None, help="the full log (default BUILD/gpu-check.log)")
    ap.add_argument("--deadline", type=float, default=float(os.environ.get("DLB_GPU_CHECK_DEADLINE", "0")),
                    help="after this many seconds print every thread's stack and exit 1 (0: none)")
    args = ap.parse_args(argv)
    watchdog(args.deadline)
    build = os.path.abspath(args.build)
    os.environ["DLBRIDGE_BUILD"] = build
    log_path = os.path.abspath(args.log or os.path.join(build, "gpu-check.log"))

    carried = [os.path.join(build, "lib", f) for f in ("libdlbridge.so", "libdlb_interop_capsule.so",
                                                       "cuda_stand_in.so")]
    missing = [p for p in carried if not os.path.exists(p)]
    if missing:
        print("tests/gpu/run: FAIL: the build at %s lacks %s (build it: cmake -S . -B build && "
              "cmake --build build; or carry tests/gpu/pack's bundle)" % (build, ", ".join(missing)))
        return 1

    if args.stand_in:
        driver = find_stand_in(build)
        if not driver:
            print("tests/gpu/run: FAIL: --stand-in: no stand-in driver (set DLB_CUDA_DRIVER)")
            return 1
        os.environ["DLB_CUDA_DRIVER"] = driver
    else:
        # The backend's own rule (src/backends/cuda/driver.c); nothing is set.
        driver = os.environ.get("DLB_CUDA_DRIVER") or "libcuda.so.1"
    devices, desc, is_stand_in, why = driver_info(driver)
    desc, short = desc if devices else (None, None)
    if not devices:
        print("tests/gpu/run: NO GPU: %s; nothing was tested (exit %d). On a machine without a "
              "GPU, `tests/gpu/run --stand-in` exercises this script against the stand-in driver."
              % (why, NO_GPU))
        return NO_GPU
    hardware = not args.stand_in          # the hardware path: real driver rules
    full = hardware and not is_stand_in   # a GPU: full sizes, PyTorch's timings
    mode = "stand-in" if not hardware else ("simulation" if is_stand_in else "hardware")
    if args.dry:
        print("tests/gpu/run --dry: driver %s; build %s; would run %s"
              % (desc, build, "specs, interop, bandwidth" if hardware
                 else "specs and dlbridge's bandwidth (stand-in)"))
        return 0

    t_start = time.perf_counter()
    rep = Report(log_path)
    rep.log("tests/gpu/run (%s): driver %s; build %s; python %s" % (
        mode, desc, build, sys.version.split()[0]))
    rep.info("driver", short)
    found = peers_mod.probe()
    for p in found.values():
        rep.log("peer " + p.line())
    rep.info("peers", peers_mod.summary(found))

    sys.path[:0] = [os.path.join(ROOT, "tests", "interop")]
    try:
        from test_numpy import Lua  # loads liblua (BUILD/lib first) and libdlbridge
    except Exception:  # noqa: a missing library is a failure with its reason
        print("tests/gpu/run: FAIL: cannot load Lua/dlbridge through ctypes:\n" + traceback.format_exc())
        return 1

    rep.log("loaded: %s" % ", ".join("%s from %s" % (n, loaded_file(n)) for n in
                                      ("libdlbridge.so", "libdlbridge.so.0", "liblua5.4.so.0")
                                      if loaded_file(n)))
    state = Lua()
    try:
        run_specs(state, rep, hardware, devices, build)
    except Exception:
        rep.fail("part 1 (specs) raised", traceback.format_exc())
        rep.end("raised")
    state.close()
    gc.collect()

    if hardware:
        import interop_gpu
        rep.begin("interop")
        try:
            words = interop_gpu.run_all(Lua, rep, found)
        except Exception:
            rep.fail("part 2 (interop) raised", traceback.format_exc())
            words = ["raised"]
        rep.end(" ".join(words))

    state = Lua()
    nbytes = int(os.environ.get("DLB_GPU_BW_BYTES", str(1 << 30 if full else 64 << 20)))
    try:
        bandwidth(state, rep, full, found.get("torch"), nbytes, 5 if full else 2)
    except Exception:
        rep.fail("part 3 (bandwidth) raised", traceback.format_exc())
        rep.end("raised")
    state.close()
    gc.collect()

    secs = time.perf_counter() - t_start
    verdict = "PASS" if not rep.failed else "FAIL (%d: %s)" % (len(rep.failed), "; ".join(rep.failed[:3]))
    line = "tests/gpu/run %s: %s | %s | %.0fs | log %s" % (mode, verdict, " | ".join(rep.parts), secs, log_path)
    rep.log(line)
    rep.file.close()
    print(line, flush=True)
    faulthandler.cancel_dump_traceback_later()
    return 0 if not rep.failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
