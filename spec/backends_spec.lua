-- backends_spec.lua -- backends and devices: where an array lives.
--
-- Every array lives on a backend: "cpu" (host memory) is always there, and
-- an embedding program may register more from C with dlb_register_backend
-- (a renderer's resources, a remote or virtual device). Such a backend's
-- memory may sit behind opaque handles that the host cannot address;
-- dlbridge then reads and writes it only through the backend's copy
-- functions, in bounded chunks, so EVERY array operation still works there
-- and gives the same values as on cpu.
--
--   dl.backends()                 {name=, device_type=, exportable=, available=, devices=}
--   dl.zeros(shape, {device = "engine_b1:1"})   create on a backend's device
--   a.device, a.backend           "engine_b1:1", "engine_b1"
--
-- Device strings are "name" (device 0) or "name:N" (0-based N). An unknown
-- name or an id out of range raises UNKNOWN_DEVICE; a backend registered
-- but with no devices here raises DEVICE_UNAVAILABLE.
--
-- In these specs the test module `testbackend` stands in for the engine a
-- host registers from C: tb.register{name=, devices=, ...} registers a
-- backend whose memory sits behind integer handles (no host pointer, no
-- DLPack export). Backend names are per lua_State and busted runs every
-- spec file in one state, so each file registers its own names, once.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local ENGINE = "engine_b1"      -- 2 devices, handles only
local GONE = "engine_b1_gone"   -- registered, but no devices here

local backend_info = support.backend_info

if not backend_info(ENGINE) then tb.register{name = ENGINE, devices = 2} end
if not backend_info(GONE) then tb.register{name = GONE, devices = 1} end
tb.set_devices(GONE, 0)

local error_code = support.code_of

-- Runs make(device) on cpu and on the engine; the two results must hold the
-- same values, and the engine's must be on the engine. Returns both.
local function same_on_both(make)
  local on_cpu, on_engine = make("cpu"), make(ENGINE)
  assert.equal("cpu:0", on_cpu.device)
  assert.equal(ENGINE .. ":0", on_engine.device)
  assert.same(on_cpu.shape, on_engine.shape)
  assert.equal(on_cpu.dtype, on_engine.dtype)
  assert.same(on_cpu:totable(), on_engine:totable())
  return on_cpu, on_engine
end

-- {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}} (float64) on device.
local function matrix(device)
  return dl.arange(1, 13, {dtype = "float64", device = device}):view{3, 4}
end

describe("dl.backends()", function()
  it("lists cpu first, always available and exportable", function()
    local cpu = dl.backends()[1]
    assert.same({name = "cpu", device_type = 1, exportable = true, available = true, devices = 1},
                cpu)
  end)

  it("lists a registered engine with its device count", function()
    local info = backend_info(ENGINE)
    assert.same({name = ENGINE, device_type = 12, exportable = false, available = true,
                 devices = 2}, info)
  end)

  it("reports an engine with no devices here as not available", function()
    local info = backend_info(GONE)
    assert.is_false(info.available)
    assert.equal(0, info.devices)
  end)

  it("returns a fresh table each call: editing it changes nothing", function()
    dl.backends()[1].name = "edited"
    assert.equal("cpu", dl.backends()[1].name)
  end)
end)

describe("device strings", function()
  it('"cpu" and "cpu:0" are host memory', function()
    assert.equal("cpu:0", dl.zeros(2).device)  -- the default
    assert.equal("cpu:0", dl.zeros(2, {device = "cpu"}).device)
    assert.equal("cpu:0", dl.zeros(2, {device = "cpu:0"}).device)
    assert.equal("cpu", dl.zeros(2).backend)
  end)

  it('a bare backend name is its device 0; "name:N" is device N', function()
    local a = dl.zeros(2, {device = ENGINE})
    assert.equal(ENGINE .. ":0", a.device)
    assert.equal(ENGINE, a.backend)
    local b = dl.zeros(2, {device = ENGINE .. ":1"})
    assert.equal(ENGINE .. ":1", b.device)
    assert.equal(ENGINE, b.backend)
  end)

  it("raises UNKNOWN_DEVICE for a name nobody registered", function()
    local ok, err = pcall(dl.zeros, 2, {device = "nosuchengine"})
    assert.is_false(ok)
    assert.equal("UNKNOWN_DEVICE", err.code)
    assert.matches("dl.backends()", err.hint, 1, true)
  end)

  it("raises UNKNOWN_DEVICE for a device id out of range", function()
    assert.equal("UNKNOWN_DEVICE", error_code(dl.zeros, 2, {device = ENGINE .. ":9"}))
    assert.equal("UNKNOWN_DEVICE", error_code(dl.zeros, 2, {device = ENGINE .. ":2"}))
    assert.equal("UNKNOWN_DEVICE", error_code(dl.zeros, 2, {device = "cpu:1"}))
  end)

  it("raises UNKNOWN_DEVICE for a malformed id", function()
    assert.equal("UNKNOWN_DEVICE", error_code(dl.zeros, 2, {device = ENGINE .. ":x"}))
    assert.equal("UNKNOWN_DEVICE", error_code(dl.zeros, 2, {device = ENGINE .. ":-1"}))
  end)

  it("raises ARGUMENT for a device that is not a string", function()
    assert.equal("ARGUMENT", error_code(dl.zeros, 2, {device = 0}))
  end)

  it("raises DEVICE_UNAVAILABLE on a backend with no devices here", function()
    local ok, err = pcall(dl.zeros, 2, {device = GONE})
    assert.is_false(ok)
    assert.equal("DEVICE_UNAVAILABLE", err.code)
    assert.equal(GONE, err.backend)
    assert.equal("DEVICE_UNAVAILABLE", error_code(dl.ones, 2, {device = GONE .. ":0"}))
  end)

  it("follows the backend: an engine that gains a device becomes available", function()
    tb.set_devices(GONE, 1)
    local ok, a = pcall(dl.zeros, 2, {device = GONE})
    tb.set_devices(GONE, 0)  -- back as the other tests expect it
    assert.is_true(ok, tostring(a))
    assert.equal(GONE .. ":0", a.device)
    assert.is_false(backend_info(GONE).available)
  end)
end)

describe("creating on a backend with opts.device", function()
  it("dl.zeros, dl.ones, dl.empty", function()
    same_on_both(function(d) return dl.zeros({2, 3}, {device = d}) end)
    same_on_both(function(d) return dl.ones({2, 3}, {dtype = "int32", device = d}) end)
    local e = dl.empty({2, 3}, {dtype = "uint8", device = ENGINE .. ":1"})
    assert.equal(ENGINE .. ":1", e.device)
    assert.same({2, 3}, e.shape)
  end)

  it("dl.full", function()
    same_on_both(function(d) return dl.full({2, 2}, 7.5, {device = d}) end)
    same_on_both(function(d) return dl.full(3, true, {device = d}) end)
  end)

  it("dl.arange and dl.linspace", function()
    same_on_both(function(d) return dl.arange(10, {device = d}) end)
    same_on_both(function(d) return dl.arange(1, 2, 0.25, {device = d}) end)
    same_on_both(function(d) return dl.linspace(0, 1, 5, {device = d}) end)
  end)

  it("dl.array from nested tables, of every kind of element", function()
    same_on_both(function(d) return dl.array({{1, 2, 3}, {4, 5, 6}}, {device = d}) end)
    same_on_both(function(d) return dl.array({1.5, -2}, {dtype = "float16", device = d}) end)
    same_on_both(function(d) return dl.array({true, false}, {device = d}) end)
    same_on_both(function(d) return dl.array({{re = 1, im = 2}, 3}, {device = d}) end)
  end)

  it("dl.array of another array copies it onto the device asked for (default cpu)", function()
    local e = dl.array({1, 2, 3}, {device = ENGINE})
    local on_cpu = dl.array(e)
    assert.equal("cpu:0", on_cpu.device)
    local on_1 = dl.array(e, {device = ENGINE .. ":1"})
    assert.equal(ENGINE .. ":1", on_1.device)
    on_1[1] = 100
    assert.same({1, 2, 3}, e:totable())
    assert.same({100, 2, 3}, on_1:totable())
  end)

  it("dl.frombytes", function()
    local bytes = dl.arange(6, {dtype = "int16"}):tobytes()
    local e = dl.frombytes(bytes, "int16", {2, 3}, {device = ENGINE})
    assert.equal(ENGINE .. ":0", e.device)
    assert.same({{0, 1, 2}, {3, 4, 5}}, e:totable())
    assert.equal(bytes, e:tobytes())
  end)

  it("size 0 and 0-d arrays", function()
    same_on_both(function(d) return dl.zeros({0, 3}, {device = d}) end)
    local s = dl.full({}, 4, {device = ENGINE})
    assert.equal(4, s:get())
    s:set(5)
    assert.equal(5, s:get())
  end)
end)

describe("every array operation works on a backend without a host pointer", function()
  it("attributes and #a", function()
    local a = dl.zeros({3, 4}, {dtype = "float32", device = ENGINE .. ":1"})
    assert.equal(ENGINE .. ":1", a.device)
    assert.equal(ENGINE, a.backend)
    assert.same({3, 4}, a.shape)
    assert.same({4, 1}, a.strides)
    assert.equal(2, a.ndim)
    assert.equal(12, a.size)
    assert.equal("float32", a.dtype)
    assert.equal(4, a.itemsize)
    assert.equal(48, a.nbytes)
    assert.is_false(a.readonly)
    assert.equal(3, #a)
  end)

  it("reads elements with a[i], a[i][j] and a:get", function()
    local a = matrix(ENGINE)
    assert.equal(2, a[1][2])
    assert.equal(12, a[-1][-1])
    assert.equal(7, a:get(2, 3))
    assert.equal(9, a:get(-1, 1))
    assert.equal("INDEX", error_code(a.get, a, 4, 1))
  end)

  it("writes elements with a[i] = v and a:set", function()
    local c, e = matrix("cpu"), matrix(ENGINE)
    for _, a in ipairs{c, e} do
      a[2][3] = -7
      a:set(1, -1, 40)
    end
    assert.same(c:totable(), e:totable())
    assert.equal(-7, e:get(2, 3))
    assert.equal("VALUE", error_code(function() e[1][1] = "x" end))
  end)

  it("assigns whole rows: a scalar, a table, an array", function()
    local c, e = matrix("cpu"), matrix(ENGINE)
    for _, a in ipairs{c, e} do
      a[1] = 0
      a[2] = {10, 20, 30, 40}
      a[3] = dl.arange(4, {device = a.device})
    end
    assert.same(c:totable(), e:totable())
    assert.same({0, 0, 0, 0}, e[1]:totable())
  end)

  it("prints like cpu, with the engine's device", function()
    local e = dl.array({1, 2, 3}, {device = ENGINE})
    assert.equal("array([1, 2, 3], shape=(3,), dtype=int64, device=" .. ENGINE .. ":0)",
                 tostring(e))
    local c = dl.array{1, 2, 3}
    assert.equal(tostring(c):gsub("cpu:0", ENGINE .. ":0"), tostring(e))
  end)

  it("summarises a large array when printing, as on cpu", function()
    local c, e = same_on_both(function(d) return dl.arange(5000, {device = d}) end)
    local text = tostring(e)
    assert.truthy(text:find("...", 1, true))
    assert.equal((tostring(c):gsub("cpu:0", ENGINE .. ":0")), text)
  end)

  it("a:totable() and a:tobytes()", function()
    local c, e = matrix("cpu"), matrix(ENGINE)
    assert.same(c:totable(), e:totable())
    assert.equal(c:tobytes(), e:tobytes())
    assert.equal(c:transpose():tobytes(), e:transpose():tobytes())  -- row-major always
  end)

  it("views: transpose, permute, slice with a negative step, select, narrow", function()
    local c, e = matrix("cpu"), matrix(ENGINE)
    local views = {
      function(a) return a:transpose() end,
      function(a) return a:permute{2, 1} end,
      function(a) return a:slice(2, nil, nil, -1) end,
      function(a) return a:slice(1, -1, 1, -2):slice(2, 4, 1, -3) end,
      function(a) return a:select(2, 3) end,
      function(a) return a:select(1, -1) end,
      function(a) return a:narrow(2, 2, 2) end,
      function(a) return a:view{2, 6} end,
      function(a) return a:unsqueeze(1):squeeze(1) end,
    }
    for i, f in ipairs(views) do
      local vc, ve = f(c), f(e)
      assert.equal(ENGINE .. ":0", ve.device)
      assert.same(vc.shape, ve.shape, "view " .. i)
      assert.same(vc.strides, ve.strides, "view " .. i)
      assert.same(vc:totable(), ve:totable(), "view " .. i)
    end
  end)

  it("views share the engine memory: a write through a view is seen in the base", function()
    local e = matrix(ENGINE)
    local reversed = e:slice(2, nil, nil, -1)
    reversed:set(1, 1, 100)  -- the last column of row 1
    assert.equal(100, e:get(1, 4))
    e:transpose()[2] = 0     -- column 2
    assert.same({0, 0, 0}, e:select(2, 2):totable())
  end)

  it("expand: a read-only broadcast view", function()
    local c, e = same_on_both(function(d)
      return dl.array({1, 2, 3}, {device = d}):view{1, 3}:expand{2, 3}
    end)
    assert.same(c.strides, e.strides)
    assert.is_true(e.readonly)
    assert.equal("READ_ONLY", error_code(function() e:set(1, 1, 9) end))
  end)

  it("reshape that must copy gives a new engine array", function()
    local c, e = same_on_both(function(d) return matrix(d):transpose():reshape{12} end)
    assert.is_true(e:is_contiguous())
    local base = matrix(ENGINE)
    local flat = base:transpose():reshape{12}
    flat[1] = -1
    assert.equal(1, base:get(1, 1))  -- a copy, not a view
  end)

  it("a:astype(dtype) converts on the engine", function()
    for _, dtype in ipairs{"int8", "uint16", "float16", "bfloat16", "float32", "bool",
                           "complex64"} do
      local c, e = same_on_both(function(d) return matrix(d):astype(dtype) end)
      assert.equal(dtype, e.dtype)
    end
    -- the cast of a non-contiguous view
    same_on_both(function(d) return matrix(d):transpose():astype("int32") end)
    assert.equal("VALUE", error_code(function()
      return dl.array({0 / 0}, {device = ENGINE}):astype("int32")
    end))
  end)

  it("a:copy() and a:contiguous()", function()
    local c, e = same_on_both(function(d) return matrix(d):slice(1, nil, nil, -1):copy() end)
    assert.is_true(e:is_contiguous())
    same_on_both(function(d) return matrix(d):transpose():contiguous() end)
    local m = matrix(ENGINE)
    assert.is_true(rawequal(m, m:contiguous()))
    local copy = m:copy()
    copy[1][1] = 50
    assert.equal(1, m:get(1, 1))
  end)

  it("a:fill(v), of a whole array and of a strided view", function()
    same_on_both(function(d) return matrix(d):fill(2.5) end)
    same_on_both(function(d)
      local a = matrix(d)
      a:select(2, 2):fill(-1)
      return a
    end)
    local e = matrix(ENGINE)
    assert.is_true(rawequal(e, e:fill(0)))
    assert.equal("VALUE", error_code(function() dl.zeros(2, {dtype = "uint8", device = ENGINE}):fill(-1) end))
  end)

  it("a:copy_from(src) from tables, scalars, cpu arrays and engine arrays", function()
    same_on_both(function(d) return matrix(d):copy_from{{1, 2, 3, 4}, {5, 6, 7, 8}, {0, 0, 0, 0}} end)
    same_on_both(function(d) return matrix(d):copy_from{9, 8, 7, 6} end)  -- broadcast
    same_on_both(function(d) return matrix(d):copy_from(3) end)
    same_on_both(function(d) return matrix(d):copy_from(matrix("cpu"):slice(1, nil, nil, -1)) end)
    same_on_both(function(d)
      return matrix(d):copy_from(dl.arange(12, {dtype = "int16", device = ENGINE .. ":1"}):view{3, 4})
    end)
    same_on_both(function(d) return matrix(d):copy_from(matrix(ENGINE):transpose():transpose()) end)
  end)

  it("a:copy_from of an engine array into a cpu array", function()
    local c = dl.zeros{3, 4}
    c:copy_from(matrix(ENGINE):slice(2, nil, nil, -1))
    assert.same(matrix("cpu"):slice(2, nil, nil, -1):totable(), c:totable())
  end)

  it("a:copy_from of an overlapping view of itself", function()
    same_on_both(function(d)
      local a = dl.arange(8, {device = d})
      a:copy_from(a:slice(1, nil, nil, -1))
      return a
    end)
    same_on_both(function(d)
      local a = dl.arange(8, {device = d})
      a:narrow(1, 2, 6):copy_from(a:narrow(1, 1, 6))  -- shift right by one
      return a
    end)
  end)

  it("a:delete() frees the engine memory; later use raises DELETED", function()
    collectgarbage()
    collectgarbage()
    local live = tb.stats(ENGINE).live
    local a = dl.zeros(4, {device = ENGINE})
    assert.equal(live + 1, tb.stats(ENGINE).live)
    a:delete()
    assert.equal(live, tb.stats(ENGINE).live)
    assert.equal("DELETED", error_code(function() return a[1] end))
    assert.equal("dlbridge.Array (deleted)", tostring(a))
  end)

  it("every element access goes through the backend: no host pointer is used", function()
    local a = dl.arange(4, {device = ENGINE})
    local before = tb.stats(ENGINE)
    assert.equal(2, a[3])
    a[3] = 5
    local after = tb.stats(ENGINE)
    assert.equal(before.to_host + 1, after.to_host)
    assert.equal(before.from_host + 1, after.from_host)
  end)
end)
