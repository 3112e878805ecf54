-- dlpack_export_spec.lua -- exporting an array to DLPack with a:to_dlpack(opts).
--
-- a:to_dlpack(opts) returns a capsule (a dlbridge.Capsule userdata) that owns
-- one DLPack tensor until a consumer (dl.from_dlpack, or a C host) takes it.
-- The capsule tells what it holds:
--   capsule.versioned   true: DLManagedTensorVersioned; false: legacy DLManagedTensor
--   capsule.version     {major, minor} ({1, 3}); nil for a legacy capsule
--   capsule.consumed    true once a consumer took the tensor
--   capsule.device      {device_type, device_id} in DLPack numbering ({1, 0} = cpu)
--
-- opts (all optional; any other key raises ARGUMENT):
--   max_version = {major, minor}  absent or major >= 1: versioned; {0, x}: legacy
--   dl_device = {type, id}        where the consumer wants the data ({1, 0} = cpu)
--   copy = nil | true | false     nil: copy only if needed; true: always copy;
--                                 false: never copy (COPY_REQUIRED if it must)
--   stream = integer              the consumer's stream (device backends with queues);
--                                 -1: no ordering; others on host memory: ARGUMENT
--   fallback = "cpu"              copy to host memory when the backend cannot
--                                 export; host arrays export as they are
--   layout = "any"                the array's own strides (the default)
--          | "nonnegative"        no negative stride (PyTorch aborts on them)
--          | "contiguous"         row-major and compact; an array without the
--                                 layout goes out as a copy (copy = false:
--                                 COPY_REQUIRED)
--
-- Read-only arrays (a:expand views) export as versioned tensors with the
-- READ_ONLY flag, and the import is read-only too. A legacy tensor has no such
-- flag, so a read-only array goes out as legacy as a copy (copy = nil copies
-- because it must; copy = false raises COPY_REQUIRED).
--
-- Exported tensors always carry strides, exactly the array's own (never
-- "normalised"): a round trip through dl.from_dlpack gives back the same shape
-- and strides, including negative strides and those of extent-1 dims.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

-- a exported with opts and imported again.
local function roundtrip(a, opts)
  return dl.from_dlpack(a:to_dlpack(opts))
end

local readonly_array = support.readonly_array

describe("a:to_dlpack()", function()
  it("returns a capsule", function()
    local a = dl.zeros{2, 3}
    local capsule = a:to_dlpack()
    assert.equal("userdata", type(capsule))
    assert.equal("dlbridge.Capsule", getmetatable(capsule).__name)
    assert.is_false(dl.is_array(capsule))
  end)

  it("makes a versioned DLPack 1.3 capsule by default", function()
    local capsule = dl.zeros{2, 3}:to_dlpack()
    assert.is_true(capsule.versioned)
    assert.same({1, 3}, capsule.version)
  end)

  it("starts unconsumed", function()
    assert.is_false(dl.zeros(3):to_dlpack().consumed)
  end)

  it("tells the device as {device_type, device_id}: {1, 0} for cpu", function()
    assert.same({1, 0}, dl.zeros(3):to_dlpack().device)
  end)

  it("answers nil for other capsule fields", function()
    local capsule = dl.zeros(3):to_dlpack()
    assert.is_nil(capsule.flags)
    assert.is_nil(capsule[1])
  end)

  it("shares memory with the array (no copy by default)", function()
    local a = dl.zeros{2, 3}
    local b = roundtrip(a)
    b:set(1, 2, 7)
    assert.equal(7, a:get(1, 2))
    a:set(2, 3, 9)
    assert.equal(9, b:get(2, 3))
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros(3)
    a:delete()
    local ok, err = pcall(a.to_dlpack, a)
    assert.is_false(ok)
    assert.equal("DELETED", err.code)
    assert.equal("Array:to_dlpack", err.op)
  end)
end)

describe("opts.max_version", function()
  it("absent: versioned", function()
    assert.is_true(dl.zeros(3):to_dlpack({}).versioned)
  end)

  it("{1, 3} or any major >= 1: versioned, at version 1.x", function()
    local a = dl.zeros(3)
    assert.same({1, 3}, a:to_dlpack{max_version = {1, 3}}.version)
    local c = a:to_dlpack{max_version = {1, 0}}
    assert.is_true(c.versioned)
    assert.equal(1, c.version[1])
    c = a:to_dlpack{max_version = {2, 0}}  -- a newer consumer still reads 1.x
    assert.is_true(c.versioned)
    assert.same({1, 3}, c.version)
  end)

  it("{0, x}: a legacy capsule, with no version", function()
    local capsule = dl.zeros(3):to_dlpack{max_version = {0, 8}}
    assert.is_false(capsule.versioned)
    assert.is_nil(capsule.version)
    assert.same({1, 0}, capsule.device)
  end)

  it("legacy capsules import like versioned ones", function()
    local a = dl.arange(6):view{2, 3}
    local b = roundtrip(a, {max_version = {0, 8}})
    assert.same({{0, 1, 2}, {3, 4, 5}}, b:totable())
    b:set(1, 1, 10)
    assert.equal(10, a:get(1, 1))
  end)

  it("raises ARGUMENT for a value that is not a pair of integers >= 0", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = "1.3"}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = 1}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {1}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {-1, 0}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {1, -3}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {1.5, 0}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_version = {"one", "three"}}))
  end)
end)

describe("opts.dl_device", function()
  it("{1, 0} (cpu) on a cpu array exports as usual, without a copy", function()
    local a = dl.zeros(3)
    local capsule = a:to_dlpack{dl_device = {1, 0}}
    assert.same({1, 0}, capsule.device)
    dl.from_dlpack(capsule)[2] = 5
    assert.equal(5, a[2])
    assert.is_true(dl.is_array(roundtrip(a, {dl_device = {1, 0}, copy = false})))
  end)

  it("another device raises UNSUPPORTED", function()
    local a = dl.zeros(3)
    local ok, err = pcall(a.to_dlpack, a, {dl_device = {2, 0}})  -- CUDA
    assert.is_false(ok)
    assert.equal("UNSUPPORTED", err.code)
    assert.equal("UNSUPPORTED", code_of(a.to_dlpack, a, {dl_device = {1, 1}}))  -- cpu:1
  end)

  it("another device with copy = false raises COPY_REQUIRED", function()
    local a = dl.zeros(3)
    assert.equal("COPY_REQUIRED", code_of(a.to_dlpack, a, {dl_device = {2, 0}, copy = false}))
  end)

  it("another device with a stream (that device's) still raises UNSUPPORTED", function()
    -- dl.from_dlpack(producer, {device = d}) passes dlbridge's queue on d as the stream:
    -- a producer that cannot export to d says so, and dlbridge moves the tensor itself
    local a = dl.zeros(3)
    assert.equal("UNSUPPORTED", code_of(a.to_dlpack, a, {dl_device = {2, 0}, stream = 12345}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = {1, 0}, stream = 12345}))
  end)

  it("raises ARGUMENT for a value that is not a pair of integers >= 0", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = "cpu"}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = {1}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = {1, -1}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = {-1, 0}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {dl_device = {"cpu", 0}}))
  end)
end)

describe("opts.copy", function()
  it("true always copies: the import does not share memory", function()
    local a = dl.arange(6):view{2, 3}
    local b = roundtrip(a, {copy = true})
    assert.same(a:totable(), b:totable())
    b:set(1, 1, -1)
    assert.equal(0, a:get(1, 1))
    a:set(2, 3, 50)
    assert.equal(5, b:get(2, 3))
  end)

  it("true copies for a legacy capsule too", function()
    local a = dl.arange(4)
    local b = roundtrip(a, {copy = true, max_version = {0, 8}})
    b[1] = 100
    assert.equal(0, a[1])
  end)

  it("false never copies: the import shares memory", function()
    local a = dl.zeros{2, 2}
    local b = roundtrip(a, {copy = false})
    b:set(2, 2, 4)
    assert.equal(4, a:get(2, 2))
  end)

  it("raises ARGUMENT for anything but nil, true or false", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {copy = "yes"}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {copy = 1}))
  end)
end)

describe("read-only arrays", function()
  it("export versioned, and the import stays read-only", function()
    local a = readonly_array()
    assert.is_true(a.readonly)
    local b = roundtrip(a)
    assert.is_true(b.readonly)
    assert.same({{1, 2, 3}, {1, 2, 3}}, b:totable())
    assert.equal("READ_ONLY", code_of(b.set, b, 1, 1, 0))
  end)

  it("export as a legacy capsule by copying (a legacy tensor has no read-only flag)", function()
    local a = readonly_array()
    local b = dl.from_dlpack(a:to_dlpack{max_version = {0, 8}})
    assert.is_false(b.readonly)
    assert.same(a:totable(), b:totable())
    b:set(1, 1, 9)
    assert.equal(1, a:get(1, 1))  -- a copy: a is untouched
  end)

  it("raise COPY_REQUIRED for a legacy capsule with copy = false", function()
    local a = readonly_array()
    assert.equal("COPY_REQUIRED", code_of(a.to_dlpack, a, {max_version = {0, 8}, copy = false}))
  end)

  it("export as legacy with copy = true, as a writable copy", function()
    local a = readonly_array()
    local capsule = a:to_dlpack{max_version = {0, 8}, copy = true}
    assert.is_false(capsule.versioned)
    local b = dl.from_dlpack(capsule)
    assert.is_false(b.readonly)
    assert.same({{1, 2, 3}, {1, 2, 3}}, b:totable())
    b:set(1, 1, 9)
    assert.equal(1, a:get(2, 1))
  end)

  it("keep the flag with copy = false on a versioned capsule", function()
    local b = roundtrip(readonly_array(), {copy = false})
    assert.is_true(b.readonly)
  end)

  it("leave writable arrays writable on import", function()
    assert.is_false(roundtrip(dl.zeros(3)).readonly)
    assert.is_false(roundtrip(dl.zeros(3), {max_version = {0, 8}}).readonly)
  end)
end)

describe("opts.layout", function()
  -- columns reversed: strides {3, -1}
  local function reversed()
    return dl.arange(6):view{2, 3}:slice(2, -1, 1, -1)
  end

  it("\"nonnegative\" copies a view with a negative stride", function()
    local b = roundtrip(reversed(), {layout = "nonnegative"})
    assert.same({3, 1}, b.strides)
    assert.same({{2, 1, 0}, {5, 4, 3}}, b:totable())
  end)

  it("\"nonnegative\" keeps a transposed or broadcast view as it is (no copy)", function()
    local t = dl.arange(6):view{2, 3}:T()
    local b = roundtrip(t, {layout = "nonnegative"})
    assert.same(t.strides, b.strides)
    b:set(1, 1, 42)
    assert.equal(42, t:get(1, 1))  -- shared memory
    local e = dl.arange(3):expand{2, 3}
    assert.same({0, 1}, roundtrip(e, {layout = "nonnegative"}).strides)
  end)

  it("\"contiguous\" copies anything not row-major and compact", function()
    local t = dl.arange(6):view{2, 3}:T()
    local b = roundtrip(t, {layout = "contiguous"})
    assert.same({2, 1}, b.strides)
    assert.same(t:totable(), b:totable())
    local c = dl.arange(6):view{2, 3}
    local shared = roundtrip(c, {layout = "contiguous"})
    shared:set(1, 1, 42)
    assert.equal(42, c:get(1, 1))  -- already contiguous: no copy
  end)

  it("works for legacy capsules too (what PyTorch's legacy import reads)", function()
    local capsule = reversed():to_dlpack{max_version = {0, 8}, layout = "nonnegative"}
    assert.is_false(capsule.versioned)
    assert.same({3, 1}, dl.from_dlpack(capsule).strides)
  end)

  it("with copy = false raises COPY_REQUIRED when a copy would be needed", function()
    local a = reversed()
    assert.equal("COPY_REQUIRED", code_of(a.to_dlpack, a, {layout = "nonnegative", copy = false}))
  end)

  it("raises ARGUMENT for any other value, with a hint naming the values", function()
    local a = dl.zeros{2}
    local ok, err = pcall(a.to_dlpack, a, {layout = "C"})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.truthy(err.hint:find("nonnegative", 1, true))
  end)
end)

describe("opts.stream", function()
  it("raises ARGUMENT for a stream on a cpu array, which has none; -1 (no ordering) is fine", function()
    local a = dl.zeros(3)
    for _, stream in ipairs{1, 2, 0, 12345} do
      local ok, err = pcall(a.to_dlpack, a, {stream = stream})
      assert.is_false(ok)
      assert.equal("ARGUMENT", err.code, "stream " .. stream)
    end
    assert.is_true(dl.is_array(dl.from_dlpack(a:to_dlpack{stream = -1})))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {stream = "default"}))
  end)

  it("nil is the same as no stream", function()
    assert.is_true(dl.zeros(3):to_dlpack{stream = nil}.versioned)
  end)
end)

describe("opts.fallback", function()
  it("\"cpu\" changes nothing for a cpu array: still no copy", function()
    local a = dl.zeros(3)
    local capsule = a:to_dlpack{fallback = "cpu"}
    assert.is_true(capsule.versioned)
    assert.same({1, 0}, capsule.device)
    dl.from_dlpack(capsule)[1] = 8
    assert.equal(8, a[1])
    roundtrip(a, {fallback = "cpu", copy = false})[2] = 6
    assert.equal(6, a[2])
  end)

  it("raises ARGUMENT for anything but \"cpu\"", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {fallback = "cuda"}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {fallback = true}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {fallback = "CPU"}))
  end)
end)

describe("the options table", function()
  it("raises ARGUMENT for an unknown key (a typo never passes silently)", function()
    local a = dl.zeros(3)
    local ok, err = pcall(a.to_dlpack, a, {copi = true})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.truthy(err.message:find("copi", 1, true))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {max_versions = {1, 3}}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {device = "cpu"}))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, {true}))
  end)

  it("raises ARGUMENT when it is not a table", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, "copy"))
    assert.equal("ARGUMENT", code_of(a.to_dlpack, a, 1))
  end)
end)

describe("strides on a round trip", function()
  it("are kept for a contiguous array", function()
    local a = dl.zeros{2, 3, 4}
    local b = roundtrip(a)
    assert.same({2, 3, 4}, b.shape)
    assert.same({12, 4, 1}, b.strides)
  end)

  it("are kept exactly for a transposed view", function()
    local a = dl.arange(12):view{3, 4}:transpose()
    local b = roundtrip(a)
    assert.same({4, 3}, b.shape)
    assert.same(a.strides, b.strides)
    assert.same({1, 4}, b.strides)
    assert.same(a:totable(), b:totable())
  end)

  it("are kept exactly for negative-step views", function()
    local a = dl.arange(12):view{3, 4}:slice(2, nil, nil, -1)
    local b = roundtrip(a)
    assert.same({4, -1}, b.strides)
    assert.same({{3, 2, 1, 0}, {7, 6, 5, 4}, {11, 10, 9, 8}}, b:totable())
    local r = dl.arange(10):slice(1, nil, nil, -3)
    local rb = roundtrip(r)
    assert.same(r.strides, rb.strides)
    assert.same({9, 6, 3, 0}, rb:totable())
  end)

  it("keep the strides of extent-1 dims (never rewritten)", function()
    local t = dl.zeros{3, 1}:transpose()      -- shape {1, 3}
    assert.same(t.strides, roundtrip(t).strides)
    -- an extent-1 dim with an odd stride: row 1 of a 4x6 array, every other column reversed
    local v = dl.arange(24):view{4, 6}:slice(1, 1, 1):slice(2, nil, nil, -2)
    assert.same({1, 3}, v.shape)
    assert.same({6, -2}, v.strides)
    local b = roundtrip(v)
    assert.same({6, -2}, b.strides)
    assert.same({{5, 3, 1}}, b:totable())
    assert.same({6, -2}, roundtrip(v, {max_version = {0, 8}}).strides)
    local u = dl.arange(6):view{2, 3}:unsqueeze(2)    -- shape {2, 1, 3}
    assert.same(u.strides, roundtrip(u).strides)
  end)

  it("keep the strides of extent-0 dims", function()
    local a = dl.zeros{0, 3}:transpose()
    assert.same({1, 3}, a.strides)
    local b = roundtrip(a)
    assert.same({3, 0}, b.shape)
    assert.same({1, 3}, b.strides)
  end)

  it("keep stride 0 of broadcast (expanded) dims", function()
    local a = readonly_array()
    assert.same(a.strides, roundtrip(a).strides)
  end)

  it("point at the view's first element (narrowed and selected views)", function()
    local a = dl.arange(12):view{3, 4}
    local b = roundtrip(a:narrow(2, 2, 2))
    assert.same({{1, 2}, {5, 6}, {9, 10}}, b:totable())
    local row = roundtrip(a[3])
    assert.same({8, 9, 10, 11}, row:totable())
    row[1] = 80
    assert.equal(80, a:get(3, 1))
  end)
end)

describe("dtypes on a round trip", function()
  it("bool exports and comes back as bool", function()
    local b = roundtrip(dl.array{true, false, true})
    assert.equal("bool", b.dtype)
    assert.same({true, false, true}, b:totable())
    assert.equal("bool", roundtrip(dl.array{false}, {max_version = {0, 8}}).dtype)
  end)

  it("all 15 dtypes come back with their dtype and values", function()
    local values = {
      bool = {true, false},
      int8 = {-128, 127}, int16 = {-32768, 32767}, int32 = {-2147483648, 2147483647},
      -- (to math.mininteger and math.maxinteger: spec/lua53/dlpack_export_spec.lua)
      int64 = {-2 ^ 53, 2 ^ 53},
      uint8 = {0, 255}, uint16 = {0, 65535}, uint32 = {0, 4294967295},
      uint64 = {0, 2 ^ 53},
      float16 = {-2.5, 65504.0}, bfloat16 = {-2.5, 256.0},
      float32 = {-2.5, 16777216.0}, float64 = {0.1, 1e300},
      complex64 = {{re = 1.5, im = -2.0}, {re = 0.0, im = 0.25}},
      complex128 = {{re = 0.1, im = 1e300}, {re = -3.0, im = 0.0}},
    }
    local seen = 0
    for _, dtype in ipairs(dl.dtypes()) do
      local a = dl.array(values[dtype], {dtype = dtype})
      for _, opts in ipairs{{}, {max_version = {0, 8}}, {copy = true}} do
        local b = roundtrip(a, opts)
        assert.equal(dtype, b.dtype)
        assert.same(values[dtype], b:totable(), dtype)
      end
      seen = seen + 1
    end
    assert.equal(15, seen)
  end)
end)

describe("size-0 and 0-d arrays", function()
  it("export and come back with their shape", function()
    local e = roundtrip(dl.zeros{0, 3})
    assert.same({0, 3}, e.shape)
    assert.equal(0, e.size)
    local s = roundtrip(dl.full({}, 5))
    assert.equal(0, s.ndim)
    assert.equal(5, s:get())
  end)
end)
