-- cuda_spec.lua -- arrays in NVIDIA GPU memory: the "cuda" backend.
--
-- dlbridge registers a backend named "cuda" in every state. It talks to the
-- CUDA driver (libcuda.so.1, or the library named by the environment
-- variable DLB_CUDA_DRIVER), which it opens on the first use of a cuda
-- device or of dl.backends(), never at require. Devices are "cuda:0",
-- "cuda:1", ... (DLPack's device ids).
--
--   dl.zeros({2, 3}, {device = "cuda:0"})   any constructor, on the GPU
--   a:to("cpu"), dl.device_put(a, "cuda:1") moves between host and devices
--   a:to_dlpack{stream = s}                 for a consumer working on stream s
--   dl.from_dlpack(tensor)                  a kDLCUDA tensor, zero-copy
--   dl.synchronize("cuda:0")                waits for dlbridge's work there
--
-- Element access and printing copy through host memory (correct, but slow:
-- one small transfer each). Compute (arithmetic, reductions, matmul) has no
-- GPU kernels and raises UNSUPPORTED with a hint to device_put to "cpu";
-- fills and copies run on the device.
--
-- dlbridge queues its work on a non-blocking stream of its own per device.
-- An export makes the consumer's stream wait for that work on the device,
-- without blocking the host; the stream is DLPack's number: nil or 1 the
-- legacy default stream, 2 the per-thread default, a larger number a
-- stream handle, -1 no synchronisation; 0 raises ARGUMENT.
--
-- Without a driver (or a GPU), `cuda` is listed with available = false and
-- a reason, and every use raises DEVICE_UNAVAILABLE (ctest runs this file
-- once more with DLB_CUDA_DRIVER naming no library, for that part).
--
-- In ctest these specs run against the stand-in driver of tests/cuda
-- (DLB_CUDA_DRIVER names it): host memory behind the driver's entry points,
-- streams run by worker threads after random delays, and destinations
-- filled with 0xCD when work is queued, so a missing wait reads wrong
-- bytes. That proves dlbridge's side of the protocol, not hardware
-- behaviour. The module cuda_stand_in is the test's window into it (its
-- controls and a foreign producer and consumer).
local dl = require "dlbridge"
local support = require "support"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local unpack = table.unpack or unpack      -- Lua 5.1 and LuaJIT have only unpack

local code_of = support.code_of
local cuda_info = support.backend_info("cuda")

if not cuda_info.available then
  describe("cuda without a driver", function()
    it("is listed, unavailable, with the reason", function()
      local cuda = support.backend_info("cuda")
      assert.is_false(cuda.available)
      assert.equal(0, cuda.devices)
      assert.equal(2, cuda.device_type) -- kDLCUDA
      assert.matches("CUDA driver", cuda.reason)
    end)

    it("raises DEVICE_UNAVAILABLE, with a hint, on every use", function()
      local ok, err = pcall(dl.zeros, 3, {device = "cuda:0"})
      assert.is_false(ok)
      assert.equal("DEVICE_UNAVAILABLE", err.code)
      assert.matches("dl.backends()", err.hint, 1, true)
      assert.equal("DEVICE_UNAVAILABLE", code_of(dl.device_put, dl.ones(2), "cuda"))
      assert.equal("DEVICE_UNAVAILABLE", code_of(dl.synchronize, "cuda:1"))
    end)

    it("leaves everything else as it was", function()
      assert.same({1, 2, 3}, dl.array{1, 2, 3}:to("cpu"):totable())
    end)
  end)
  return
end

-- With a driver: the stand-in's (ctest), or a GPU's (tests/gpu/run: there
-- tests/gpu/hw_stand_in.lua is the module cuda_stand_in, its `hardware`
-- true, and its foreign producer and consumer use the driver's ordinary
-- entry points). What needs the stand-in's controls or counters, or two
-- devices, is pending there, with the reason; nothing the specs do on
-- hardware hands the driver anything it does not document (no made-up
-- stream handles: those checks are the stand-in's alone).
local driver = os.getenv("DLB_CUDA_DRIVER") or ""
local found, S = pcall(require, "cuda_stand_in")
local hardware = found and S.hardware == true
local stand_in = found and not hardware and driver:find("standin", 1, true) ~= nil
local two_devices = cuda_info.devices >= 2
local on_stand_in = stand_in and it
                    or function(name) pending(name .. " (needs the stand-in driver's controls)") end
local with_module = found and it
                    or function(name) pending(name .. " (needs the module cuda_stand_in)") end
local on_two_devices = two_devices and it
                       or function(name) pending(name .. " (needs two devices)") end

-- The bytes of float32 values, as a consumer reads them.
local function f32(values) return string_pack("<" .. string.rep("f", #values), unpack(values)) end

-- Garbage collected and every device's queued work done: frees queued by
-- earlier examples have run, so memory counts can be compared.
local function settle()
  collectgarbage()
  collectgarbage()
  for d = 0, cuda_info.devices - 1 do dl.synchronize("cuda:" .. d) end
end

-- A cpu array and its copy on cuda:0.
local function pair(shape, dtype)
  local n = 1
  for _, e in ipairs(shape) do n = n * e end
  local host = dl.arange(n):astype(dtype or "float32"):reshape(shape)
  return host, host:to("cuda:0")
end

describe("dl.backends() with a driver", function()
  it("lists cuda as available, with its devices and DLPack export", function()
    local cuda = support.backend_info("cuda")
    assert.is_true(cuda.available)
    assert.is_true(cuda.devices >= 1)
    assert.is_true(cuda.exportable)
    assert.is_nil(cuda.reason)
  end)

  on_stand_in("resolves the driver's entry points with the legacy default stream's semantics", function()
    -- cuGetProcAddress(..., CU_GET_PROC_ADDRESS_LEGACY_STREAM): stream 1 is
    -- the legacy default stream whatever the process was built with.
    assert.is_true(S.query("getproc_lookups") > 0)
    assert.equal(0, S.query("getproc_not_legacy"))
  end)
end)

describe("arrays on cuda:0", function()
  it("come from every constructor with device = \"cuda:0\"", function()
    local on = {device = "cuda:0"}
    assert.same({0, 0, 0}, dl.zeros(3, on):to("cpu"):totable())
    assert.same({1, 1}, dl.ones(2, on):to("cpu"):totable())
    assert.same({7, 7}, dl.full(2, 7, on):to("cpu"):totable())
    assert.same({1, 2, 3}, dl.array({1, 2, 3}, on):to("cpu"):totable())
    assert.same({0, 1, 2}, dl.arange(0, 3, 1, on):to("cpu"):totable())
    assert.same({0, 0.5, 1}, dl.linspace(0, 1, 3, on):to("cpu"):totable())
    assert.same({4}, dl.empty(4, on).shape)
    assert.equal("cuda:0", dl.zeros(3, on).device)
  end)

  on_stand_in("fill with one memset where the bit pattern repeats, else through a copy", function()
    S.control("reset_counts")
    local a = dl.ones(1000, {dtype = "float32", device = "cuda:0"}) -- 0x3f800000: a 32-bit word
    assert.equal(1, S.query("calls:cuMemsetD32Async"))
    a:fill(1.5) -- 0x3fc00000
    assert.equal(2, S.query("calls:cuMemsetD32Async"))
    local b = dl.full(1000, 1.1, {device = "cuda:0"}) -- float64 0x3ff199999999999a repeats nothing
    assert.equal(2, S.query("calls:cuMemsetD32Async"))
    assert.equal(1.5, a[1000])
    assert.equal(1.1, b[1000])
    a:fill(0)
    assert.equal(0, a[1])
  end)

  it("read and write single elements (each a small copy) and print", function()
    local _, a = pair{2, 3}
    assert.equal(5, a[2][3])
    a[2][3] = 50
    assert.equal(50, a[2][3])
    assert.matches("50%.%]%], shape=%(2, 3%), dtype=float32, device=cuda:0", tostring(a))
  end)

  it("have views, copies, fills and casts on the device", function()
    local host, a = pair{4, 5}
    assert.same(host:transpose():totable(), a:transpose():to("cpu"):totable())
    assert.same(host:slice(2, 2, 4):totable(), a:slice(2, 2, 4):to("cpu"):totable())
    local c = a:copy()
    assert.equal("cuda:0", c.device)
    assert.same(host:totable(), c:to("cpu"):totable())
    local i = a:astype("int16")
    assert.equal("cuda:0", i.device)
    assert.same(host:astype("int16"):totable(), i:to("cpu"):totable())
    local t = dl.zeros({5, 4}, {dtype = "float32", device = "cuda:0"})
    t:copy_from(a:transpose())
    assert.same(host:transpose():totable(), t:to("cpu"):totable())
    a:transpose():slice(1, 2, 3):fill(-1) -- columns 2 and 3
    host:transpose():slice(1, 2, 3):fill(-1)
    assert.same(host:totable(), a:to("cpu"):totable())
  end)

  it("raise UNSUPPORTED with a hint to device_put for compute", function()
    local a = dl.ones(3, {device = "cuda:0"})
    local ok, err = pcall(function() return a + a end)
    assert.is_false(ok)
    assert.equal("UNSUPPORTED", err.code)
    assert.matches("device_put", err.hint, 1, true)
    assert.same({2, 2, 2}, (a:to("cpu") + a:to("cpu")):totable())
  end)
end)

describe("device_put with cuda", function()
  on_two_devices("moves cpu <-> cuda and cuda:0 <-> cuda:1, keeping the values", function()
    local host, a = pair{3, 4}
    local b = dl.device_put(a, "cuda:1")
    assert.equal("cuda:1", b.device)
    assert.same(host:totable(), b:to("cpu"):totable())
    assert.same(host:totable(), b:to("cuda:0"):to("cpu"):totable())
  end)

  on_stand_in("orders a copy to another device after the work queued on the source", function()
    local a = dl.zeros(4096, {dtype = "float32", device = "cuda:0"})
    S.control("delay_us", 20000)
    a:fill(5) -- slow, on cuda:0's stream; cuda:1's stream waits for it on the device
    local b = a:to("cuda:1")
    S.control("delay_us", 300)
    assert.is_true(string.rep(f32{5}, 4096) == b:to("cpu"):tobytes())
  end)

  it("moves strided views: rows of a pitch in one 2D copy", function()
    local host, a = pair{64, 32}
    if stand_in then S.control("reset_counts") end
    local cols = a:slice(2, 3, 10):to("cpu") -- 64 rows of 8 elements, pitch 32
    if stand_in then assert.equal(1, S.query("calls:cuMemcpy2DAsync_v2")) end
    assert.same(host:slice(2, 3, 10):totable(), cols:totable())
  end)

  on_stand_in("copies through the staging buffers when the driver refuses a 2D copy", function()
    -- Within device memory the reference lets cuMemcpy2DAsync refuse pitches
    -- that cuMemAllocPitch did not give (132 bytes here): the copy is retried
    -- the slow way, with the same result.
    local host, a = pair{64, 33}
    S.control("strict_2d", 1)
    S.control("reset_counts")
    local ok, cols = pcall(function() return a:slice(2, 3, 10):contiguous() end)
    local tries = S.query("calls:cuMemcpy2DAsync_v2")
    S.control("strict_2d", 0)
    assert.is_true(ok, tostring(cols))
    assert.is_true(tries >= 1) -- refused, then pieces through host memory
    assert.same(host:slice(2, 3, 10):totable(), cols:to("cpu"):totable())
  end)

  on_stand_in("never asks for a 2D copy wider than the device's MAX_PITCH", function()
    local host, a = pair{64, 32} -- pitch 128 bytes
    S.control("max_pitch", 64)
    S.control("reset_counts")
    local ok, cols = pcall(function() return a:slice(2, 3, 10):to("cpu") end)
    local tries = S.query("calls:cuMemcpy2DAsync_v2")
    S.control("max_pitch", 2147483647)
    assert.is_true(ok, tostring(cols))
    assert.equal(0, tries)
    assert.same(host:slice(2, 3, 10):totable(), cols:totable())
  end)

  it("moves any layout, however large, through pinned staging buffers", function()
    local host, a = pair({3, 700, 1000}) -- 8.4 MB: more than two 4 MiB staging buffers
    local view = a:permute{3, 1, 2}:slice(1, 1000, 1, -1)
    local want = host:permute{3, 1, 2}:slice(1, 1000, 1, -1):tobytes()
    assert.is_true(want == view:to("cpu"):tobytes(), "device -> host")
    if two_devices then
      assert.is_true(want == view:to("cuda:1"):to("cpu"):tobytes(), "cuda:0 -> cuda:1")
    end
    local back = dl.zeros({3, 700, 1000}, {dtype = "float32", device = "cuda:0"})
    back:permute{3, 1, 2}:slice(1, 1000, 1, -1):copy_from(dl.frombytes(want, "float32"):reshape{1000, 3, 700})
    assert.is_true(host:tobytes() == back:to("cpu"):tobytes(), "host -> strided device destination")
  end)
end)

describe("a:to_dlpack{stream = s} on cuda", function()
  with_module("makes the consumer's stream wait for dlbridge's work, without blocking the host", function()
    local s = S.stream(0)
    local a = dl.zeros(256, {dtype = "float32", device = "cuda:0"})
    if stand_in then S.control("delay_us", 20000) end
    a:fill(3) -- queued on dlbridge's stream: slow now (on the stand-in)
    local c = a:to_dlpack{stream = s}
    if stand_in then
      local pending = S.query("pending")
      S.control("delay_us", 300)
      assert.is_true(pending > 0, "the host waited for the fill")
    end
    local bytes = S.read(c, s) -- the consumer's copy runs on s
    assert.equal(string.rep(f32{3}, 256), bytes)
  end)

  with_module("takes 1 and nil (legacy), 2 (per-thread) and -1 (no ordering); 0 is ARGUMENT", function()
    local a = dl.full(4, 2, {dtype = "float32", device = "cuda:0"})
    for _, stream in ipairs{1, 2} do
      assert.equal(f32{2, 2, 2, 2}, (S.read(a:to_dlpack{stream = stream}, stream)))
    end
    assert.equal(f32{2, 2, 2, 2}, (S.read(a:to_dlpack(), 1)))
    dl.synchronize("cuda:0")
    assert.equal(f32{2, 2, 2, 2}, (S.read(a:to_dlpack{stream = -1}, 1)))
    local ok, err = pcall(a.to_dlpack, a, {stream = 0})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    if stand_in then
      -- Not a stream: the stand-in answers CUDA_ERROR_INVALID_HANDLE. The
      -- real driver documents no such check (a made-up handle is undefined
      -- behaviour there), so on hardware this is never asked.
      assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {stream = 12345}))
    end
  end)

  on_stand_in("waits on the host for a consumer stream being captured into a graph", function()
    -- An event recorded outside a capture cannot be waited for inside it
    -- (the capture would be invalidated): dlbridge's work is finished first,
    -- and the capture goes on.
    local s = S.stream(0)
    local a = dl.zeros(256, {dtype = "float32", device = "cuda:0"})
    S.control("delay_us", 20000)
    a:fill(3)
    assert.equal(0, S.capture(s))
    local ok, c = pcall(a.to_dlpack, a, {stream = s})
    local pending, status = S.query("pending"), S.capture_status(s)
    local ended = S.end_capture(s)
    S.control("delay_us", 300)
    assert.is_true(ok, tostring(c))
    assert.equal(0, pending)
    assert.equal(1, status) -- still capturing
    assert.equal(0, ended)  -- a graph, not CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
    assert.equal(string.rep(f32{3}, 256), (S.read(c, s)))
  end)

  on_stand_in("allocates and frees while another stream is captured in global mode", function()
    -- PyTorch captures in global mode, where cuMemAlloc and cuMemFree are
    -- refused and break the capture; dlbridge's calls run in relaxed mode.
    settle()
    local before = S.query("live_allocations")
    local a = dl.full(64, 1, {dtype = "float32", device = "cuda:0"})
    S.read(a:to_dlpack(), 1) -- exported: its free waits for the whole device
    local s = S.stream(0)
    assert.equal(0, S.capture(s, 0))
    local ok, b = pcall(dl.zeros, 64, {device = "cuda:0"})
    a, b = nil, nil
    settle()
    local live, status = S.query("live_allocations"), S.capture_status(s)
    assert.equal(0, S.end_capture(s))
    assert.is_true(ok)
    assert.equal(1, status)
    assert.equal(before, live)
  end)

  with_module("exports the device pointer itself; a cpu copy with dl_device = {1, 0}", function()
    local a = dl.array({1, 2, 3}, {dtype = "float32", device = "cuda:0"})
    local c = a:to_dlpack()
    assert.same({2, 0}, c.device)
    local h = a:to_dlpack{dl_device = {1, 0}}
    assert.same({1, 0}, h.device)
    assert.same({1, 2, 3}, dl.from_dlpack(h):totable())
    S.read(c, 1)
  end)
end)

describe("dl.from_dlpack of CUDA memory", function()
  with_module("wraps a kDLCUDA tensor without a copy", function()
    local before = S.deleted()
    local a = dl.from_dlpack(S.tensor{1, 2, 3, 4})
    assert.equal("cuda:0", a.device)
    assert.same({1, 2, 3, 4}, a:to("cpu"):totable())
    a[1] = 10 -- written in the producer's memory
    local bytes, p1 = S.read(a:to_dlpack(), 1)
    assert.equal(f32{10, 2, 3, 4}, bytes)
    local _, p2 = S.read(a:to_dlpack(), 1)
    assert.equal(p1, p2)
    a = nil
    collectgarbage()
    collectgarbage()
    assert.equal(before + 1, S.deleted())
  end)

  with_module("raises DLPACK_INVALID for memory that is not that device's", function()
    assert.equal("DLPACK_INVALID", code_of(dl.from_dlpack, S.tensor{1, 2, 3, pointer = "host"}))
    assert.equal("DLPACK_INVALID", code_of(dl.from_dlpack, S.tensor{1, 2, 3, claim = 100000}))
    if two_devices then
      assert.equal("DLPACK_INVALID", code_of(dl.from_dlpack, S.tensor{1, 2, 3, device = 0, dl_device = 1}))
    end
    assert.equal("DEVICE_UNAVAILABLE", code_of(dl.from_dlpack, S.tensor{1, 2, 3, dl_device = 7}))
  end)

  with_module("takes pinned (kDLCUDAHost) and managed (kDLCUDAManaged) memory as host memory", function()
    local pinned = dl.from_dlpack(S.tensor{1, 2, pointer = "host", device_type = 3})
    assert.equal("cpu:0", pinned.device) -- host-reachable: computes like any cpu array
    assert.same({2, 4}, (pinned * 2):totable())
    local managed = dl.from_dlpack(S.tensor{5, 6, pointer = "managed", device_type = 13})
    assert.equal("cpu:0", managed.device)
    assert.same({5, 6}, managed:totable())
    local other = two_devices and 1 or 0
    local on_device = dl.from_dlpack(S.tensor{7, 8, pointer = "managed", device = other}) -- as kDLCUDA
    assert.equal("cuda:" .. other, on_device.device)
    assert.same({7, 8}, on_device:to("cpu"):totable())
  end)

  on_stand_in("has a pinned or managed producer finish its work before the host reads", function()
    -- Pinned and managed memory become cpu arrays: the producer is asked to
    -- order its work before dlbridge's stream on cuda:0, and the host waits
    -- for that stream before reading (a producer still writing is not read).
    local seen = {}
    local function producer(pointer, device_type)
      return {
        __dlpack_device = function() return device_type, 0 end,
        __dlpack = function(_, opts)
          seen[#seen + 1] = opts.stream
          return S.tensor{1, 2, 3, pointer = pointer, device_type = device_type, stream = opts.stream or 1}
        end,
      }
    end
    S.control("delay_us", 20000)
    local ok1, pinned = pcall(dl.from_dlpack, producer("pinned", 3))
    local ok2, managed = pcall(dl.from_dlpack, producer("managed", 13))
    local values = {ok1 and pinned:totable(), ok2 and managed:totable()}
    S.control("delay_us", 300)
    assert.is_true(ok1, tostring(pinned))
    assert.is_true(ok2, tostring(managed))
    assert.same({{1, 2, 3}, {1, 2, 3}}, values)
    assert.same({S.queue(0), S.queue(0)}, seen)
  end)

  with_module("passes dlbridge's stream to a producer's __dlpack", function()
    local seen
    local producer = {
      __dlpack = function(_, opts) seen = opts.stream; return S.tensor{5, 6} end,
      __dlpack_device = function() return 2, 0 end,
    }
    local a = dl.from_dlpack(producer)
    assert.same({5, 6}, a:to("cpu"):totable())
    assert.equal(S.queue(0), seen)
    assert.is_true(seen > 2)
  end)
end)

describe("cuda errors", function()
  on_stand_in("map CUDA_ERROR_OUT_OF_MEMORY to OUT_OF_MEMORY, its number in err.status", function()
    S.control("fail_alloc", 1)
    local ok, err = pcall(dl.zeros, 10, {device = "cuda:0"})
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.equal(2, err.status)
    assert.matches("CUDA_ERROR_OUT_OF_MEMORY", err.message, 1, true)
    assert.equal("OUT_OF_MEMORY", code_of(dl.empty, 2 ^ 31, {dtype = "uint8", device = "cuda:1"}))
    assert.same({0}, dl.zeros(1, {device = "cuda:0"}):to("cpu"):totable())
  end)

  on_stand_in("report other failures as BACKEND_FAILURE with the CUDA error's name and number", function()
    local a = dl.ones(4, {device = "cuda:0"})
    S.control("fail_copy", 1)
    local ok, err = pcall(a.to, a, "cpu")
    assert.is_false(ok)
    assert.equal("BACKEND_FAILURE", err.code)
    assert.equal(999, err.status)
    assert.matches("CUDA_ERROR_UNKNOWN", err.message, 1, true) -- the driver's name for it
    assert.same({1, 1, 1, 1}, a:to("cpu"):totable())
  end)
end)

describe("cuda memory", function()
  on_stand_in("is zeroed and freed in stream order: the host does not wait", function()
    settle() -- (earlier exports' frees would wait for the whole device)
    S.control("delay_us", 20000)
    local a = dl.zeros(4096, {dtype = "float32", device = "cuda:0"})
    local after_zeros = S.query("pending")
    a:fill(1)
    a = nil
    collectgarbage()
    collectgarbage()
    local after_free = S.query("pending")
    S.control("delay_us", 300)
    dl.synchronize("cuda:0")
    assert.is_true(after_zeros > 0, "zeros waited for its memset")
    assert.is_true(after_free > 0, "the free waited for the fill")
    assert.equal(0, S.query("early_frees"))
  end)

  on_two_devices("is freed after another device's queued copy that reads it", function()
    local src = dl.full(4096, 2, {dtype = "float32", device = "cuda:0"})
    dl.synchronize("cuda:0")
    if stand_in then S.control("delay_us", 20000) end
    local dst = src:to("cuda:1") -- queued on cuda:1's stream, reading src
    src = nil
    collectgarbage()
    collectgarbage()
    if stand_in then S.control("delay_us", 300) end
    dl.synchronize("cuda:1")
    dl.synchronize("cuda:0")
    if stand_in then assert.equal(0, S.query("early_frees")) end
    assert.is_true(string.rep(f32{2}, 4096) == dst:to("cpu"):tobytes())
  end)

  on_stand_in("keeps a free the driver refuses, and frees it at the next allocation", function()
    settle()
    local before = S.query("live_allocations")
    local a = dl.zeros(100, {device = "cuda:0"})
    S.control("fail_free", 1)
    a = nil
    settle()
    local kept = S.query("live_allocations")
    local b = dl.zeros(1, {device = "cuda:0"}) -- tries the kept free again
    settle()
    assert.equal(before + 1, kept)
    assert.equal(before + 1, S.query("live_allocations")) -- b's, not a's
    assert.same({0}, b:to("cpu"):totable())
  end)
end)

describe("dl.synchronize(device)", function()
  on_stand_in("waits until dlbridge's queued work on the device is done", function()
    local a = dl.zeros(1000, {dtype = "float32", device = "cuda:1"})
    S.control("delay_us", 5000)
    a:fill(2)
    a:slice(1, 1, 500):fill(1)
    dl.synchronize("cuda:1")
    local pending = S.query("pending")
    S.control("delay_us", 300)
    assert.equal(0, pending)
    dl.synchronize("cpu") -- nothing queued there: returns at once
  end)
end)
