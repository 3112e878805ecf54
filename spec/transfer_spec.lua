-- transfer_spec.lua -- moving arrays between backends and devices.
--
--   dl.device_put(a, device, opts)   a on `device` ("cpu", "engine", "engine:1")
--   a:to(device, opts)               the same, as a method
--
-- opts = {copy = true|false, donate = true|false}:
--   * on the array's own device the result is `a` itself (nothing is copied)
--     unless copy = true;
--   * otherwise the result is a new, contiguous array with a's values, even
--     when a is a transposed, reversed or broadcast (expand) view;
--   * donate = true deletes `a` after the copy (later use raises DELETED);
--     when nothing is copied there is nothing to donate, and `a` stays live.
--
-- Memory the host cannot address travels through host staging buffers of at
-- most 1 MiB, so a transfer never needs a second copy of the whole array in
-- host memory. Within one backend that has its own copy function (a device
-- to device copy), dlbridge lets the backend copy.
--
-- In these specs the test module `testbackend` stands in for the engine a
-- host registers from C with dlb_register_backend; tb.stats(name) counts
-- the calls dlbridge makes into it.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local ENGINE = "engine_t1"      -- 2 devices, no device-side copy: staged through host
local FAST = "engine_t1_fast"   -- 2 devices, with copy_within
local GONE = "engine_t1_gone"   -- registered, no devices here

local registered = support.registered

if not registered(ENGINE) then tb.register{name = ENGINE, devices = 2} end
if not registered(FAST) then tb.register{name = FAST, devices = 2, copy_within = true} end
if not registered(GONE) then tb.register{name = GONE, devices = 1} end

local error_code = support.code_of

-- {{1, 2, 3}, {4, 5, 6}} (float64) on device.
local function matrix(device)
  return dl.array({{1, 2, 3}, {4, 5, 6}}, {dtype = "float64", device = device})
end

-- The change in each tb.stats counter while f runs.
local function stats_during(name, f)
  local before = tb.stats(name)
  f()
  local after, delta = tb.stats(name), {}
  for k, v in pairs(after) do delta[k] = v - before[k] end
  return delta
end

describe("dl.device_put(a, device)", function()
  it("moves a cpu array onto an engine, and back", function()
    local a = matrix("cpu")
    local e = dl.device_put(a, ENGINE)
    assert.equal(ENGINE .. ":0", e.device)
    assert.same(a:totable(), e:totable())
    local back = dl.device_put(e, "cpu")
    assert.equal("cpu:0", back.device)
    assert.same(a:totable(), back:totable())
  end)

  it("makes a copy: the two arrays are independent", function()
    local a = matrix("cpu")
    local e = dl.device_put(a, ENGINE)
    e:set(1, 1, 100)
    a:set(2, 2, -5)
    assert.equal(1, a:get(1, 1))
    assert.equal(5, e:get(2, 2))
  end)

  it("moves between two devices of an engine", function()
    local e0 = matrix(ENGINE)
    local e1 = dl.device_put(e0, ENGINE .. ":1")
    assert.equal(ENGINE .. ":1", e1.device)
    assert.same(e0:totable(), e1:totable())
  end)

  it("moves between two engines", function()
    local e = matrix(ENGINE .. ":1")
    local f = dl.device_put(e, FAST)
    assert.equal(FAST .. ":0", f.device)
    assert.same(e:totable(), f:totable())
  end)

  it("keeps the dtype", function()
    for _, dtype in ipairs{"bool", "int8", "uint64", "float16", "bfloat16", "complex128"} do
      local a = dl.ones({2, 2}, {dtype = dtype})
      local e = dl.device_put(a, ENGINE)
      assert.equal(dtype, e.dtype)
      assert.same(a:totable(), dl.device_put(e, "cpu"):totable())
    end
  end)

  it("moves size-0 and 0-d arrays", function()
    local empty = dl.device_put(dl.zeros{0, 3}, ENGINE)
    assert.same({0, 3}, empty.shape)
    local scalar = dl.device_put(dl.full({}, 7), ENGINE)
    assert.equal(7, scalar:get())
  end)
end)

describe("a:to(device)", function()
  it("is the method form of dl.device_put", function()
    local e = matrix("cpu"):to(ENGINE .. ":1")
    assert.equal(ENGINE .. ":1", e.device)
    assert.same(matrix("cpu"):totable(), e:to("cpu"):totable())
  end)
end)

describe("a view as the source", function()
  -- each entry: a view of a 2x3 matrix on a device
  local views = {
    transposed = function(a) return a:transpose() end,
    ["reversed (negative step)"] = function(a) return a:slice(2, nil, nil, -1) end,
    ["every other, reversed"] = function(a) return a:slice(2, -1, 1, -2) end,
    ["a selected column"] = function(a) return a:select(2, 2) end,
    ["expanded (stride 0)"] = function(a) return a:select(1, 1):view{1, 3}:expand{4, 3} end,
  }
  local routes = {
    {"cpu", ENGINE}, {ENGINE, "cpu"}, {ENGINE, ENGINE .. ":1"}, {FAST, FAST .. ":1"},
    {ENGINE, FAST},
  }

  for what, view in pairs(views) do
    it("gives a contiguous array with the view's values: " .. what, function()
      for _, route in ipairs(routes) do
        local from, to = route[1], route[2]
        local src = view(matrix(from))
        local out = dl.device_put(src, to)
        local label = what .. ", " .. from .. " -> " .. to
        assert.equal(dl.device_put(dl.zeros(1), to).device, out.device, label)
        assert.is_true(out:is_contiguous(), label)
        assert.is_false(out.readonly, label)
        assert.same(view(matrix("cpu")):totable(), out:totable(), label)
      end
    end)
  end

  it("copies even on the same device when asked, and the copy is contiguous", function()
    local src = matrix(ENGINE):transpose()
    local out = src:to(ENGINE, {copy = true})
    assert.is_true(out:is_contiguous())
    assert.same(src:totable(), out:totable())
  end)
end)

describe("the same device", function()
  it("returns a itself: nothing is copied", function()
    local c = matrix("cpu")
    assert.is_true(rawequal(c, dl.device_put(c, "cpu")))
    assert.is_true(rawequal(c, c:to("cpu:0")))
    local e = matrix(ENGINE .. ":1")
    assert.is_true(rawequal(e, e:to(ENGINE .. ":1")))
    local v = matrix(ENGINE):transpose()  -- a view too: still itself, not made contiguous
    assert.is_true(rawequal(v, v:to(ENGINE)))
  end)

  it("returns a new array with copy = true", function()
    local e = matrix(ENGINE)
    local c = dl.device_put(e, ENGINE, {copy = true})
    assert.is_false(rawequal(e, c))
    assert.equal(e.device, c.device)
    c:set(1, 1, 100)
    assert.equal(1, e:get(1, 1))
  end)

  it("copy = false is the default", function()
    local e = matrix(ENGINE)
    assert.is_true(rawequal(e, e:to(ENGINE, {copy = false})))
  end)
end)

describe("opts.donate", function()
  it("deletes the source after the copy", function()
    local e = matrix(ENGINE)
    local c = dl.device_put(e, "cpu", {donate = true})
    assert.same({{1, 2, 3}, {4, 5, 6}}, c:totable())
    local ok, err = pcall(function() return e:get(1, 1) end)
    assert.is_false(ok)
    assert.equal("DELETED", err.code)
    assert.equal("DELETED", error_code(e.to, e, "cpu"))
  end)

  it("frees the source's engine memory at once", function()
    collectgarbage()
    collectgarbage()
    local live = tb.stats(ENGINE).live
    local e = matrix(ENGINE)
    assert.equal(live + 1, tb.stats(ENGINE).live)
    local c = e:to("cpu", {donate = true})
    assert.equal(live, tb.stats(ENGINE).live)
    assert.equal(6, c:get(2, 3))
  end)

  it("with copy = true on the same device: copies, then deletes the source", function()
    local e = matrix(ENGINE)
    local c = e:to(ENGINE, {copy = true, donate = true})
    assert.equal(6, c:get(2, 3))
    assert.equal("DELETED", error_code(e.get, e, 1, 1))
  end)

  it("on the same device without copy: returns a, still alive", function()
    local e = matrix(ENGINE)
    local same = e:to(ENGINE, {donate = true})
    assert.is_true(rawequal(e, same))
    assert.equal(6, e:get(2, 3))
  end)

  it("donating a view deletes the view only; the base keeps its memory", function()
    local base = matrix(ENGINE)
    local row = base[2]
    local c = row:to("cpu", {donate = true})
    assert.same({4, 5, 6}, c:totable())
    assert.equal("DELETED", error_code(function() return row[1] end))
    assert.same({4, 5, 6}, base[2]:totable())
  end)
end)

describe("bad arguments", function()
  it("raises ARGUMENT when the device is missing", function()
    local a = matrix("cpu")
    local ok, err = pcall(dl.device_put, a)
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.equal("dl.device_put", err.op)
    assert.equal("ARGUMENT", error_code(a.to, a))
    assert.equal("ARGUMENT", error_code(a.to, a, nil, {copy = true}))
  end)

  it("raises ARGUMENT for a device that is not a string", function()
    assert.equal("ARGUMENT", error_code(dl.device_put, matrix("cpu"), 1))
  end)

  it("raises ARGUMENT for an unknown option", function()
    local a = matrix("cpu")
    local ok, err = pcall(dl.device_put, a, ENGINE, {cpoy = true})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.matches("cpoy", err.message, 1, true)
    assert.equal("ARGUMENT", error_code(a.to, a, ENGINE, {stream = 1}))
  end)

  it("raises ARGUMENT when copy or donate is not a boolean", function()
    local a = matrix("cpu")
    assert.equal("ARGUMENT", error_code(dl.device_put, a, ENGINE, {copy = 1}))
    assert.equal("ARGUMENT", error_code(dl.device_put, a, ENGINE, {copy = "yes"}))
    assert.equal("ARGUMENT", error_code(a.to, a, ENGINE, {donate = 1}))
    assert.equal("ARGUMENT", error_code(a.to, a, "cpu", {donate = "true"}))
  end)

  it("raises ARGUMENT when the options are not a table", function()
    local a = matrix("cpu")
    assert.equal("ARGUMENT", error_code(a.to, a, ENGINE, true))
  end)

  it("raises ARGUMENT when the source is not an array", function()
    assert.equal("ARGUMENT", error_code(dl.device_put, {1, 2, 3}, ENGINE))
  end)

  it("raises UNKNOWN_DEVICE for an unknown backend or device id", function()
    local a = matrix("cpu")
    local ok, err = pcall(dl.device_put, a, "nosuchengine")
    assert.is_false(ok)
    assert.equal("UNKNOWN_DEVICE", err.code)
    assert.equal("UNKNOWN_DEVICE", error_code(a.to, a, ENGINE .. ":2"))
    assert.equal("UNKNOWN_DEVICE", error_code(a.to, a, "cpu:1"))
  end)

  it("raises DEVICE_UNAVAILABLE for a backend with no devices here", function()
    local e = matrix(GONE)          -- made while the engine still had its device
    tb.set_devices(GONE, 0)
    local ok, err = pcall(dl.device_put, matrix("cpu"), GONE)
    local code2 = error_code(e.to, e, GONE .. ":0", {copy = true})
    local back_ok, back = pcall(e.to, e, "cpu")
    tb.set_devices(GONE, 1)
    assert.is_false(ok)
    assert.equal("DEVICE_UNAVAILABLE", err.code)
    assert.equal(GONE, err.backend)
    assert.equal("DEVICE_UNAVAILABLE", code2)
    -- arrays already there can still be read out
    assert.is_true(back_ok, tostring(back))
    assert.same({{1, 2, 3}, {4, 5, 6}}, back:totable())
  end)

  it("leaves the source alive when the transfer fails, even with donate", function()
    local a = matrix("cpu")
    assert.equal("UNKNOWN_DEVICE", error_code(a.to, a, ENGINE .. ":7", {donate = true}))
    assert.equal(6, a:get(2, 3))
  end)
end)

describe("how the copy is done", function()
  it("a backend with its own copy function copies within itself", function()
    local src = matrix(FAST)
    local out
    local d = stats_during(FAST, function() out = src:to(FAST .. ":1") end)
    assert.equal(1, d.within)
    assert.equal(0, d.to_host)
    assert.equal(0, d.from_host)
    assert.same(src:totable(), out:totable())
    d = stats_during(FAST, function() out = src:to(FAST, {copy = true}) end)
    assert.equal(1, d.within)
    assert.equal(0, d.to_host)
  end)

  it("a view that is not contiguous goes through host memory instead", function()
    local src = matrix(FAST):transpose()
    local out
    local d = stats_during(FAST, function() out = src:to(FAST .. ":1") end)
    assert.equal(0, d.within)
    assert.is_true(d.to_host > 0)
    assert.same(src:totable(), out:totable())
  end)

  it("a backend without one is staged through host memory", function()
    local src = matrix(ENGINE)
    local out
    local d = stats_during(ENGINE, function() out = src:to(ENGINE .. ":1") end)
    assert.equal(0, d.within)
    assert.is_true(d.to_host > 0 and d.from_host > 0)
    assert.same(src:totable(), out:totable())
    -- a small contiguous array: one call out of the engine, one call in
    d = stats_during(ENGINE, function() src:to(ENGINE .. ":1") end)
    assert.equal(1, d.to_host)
    assert.equal(1, d.from_host)
  end)

  it("a contiguous array moves between the host and the device in one call", function()
    local n = 512 * 1024  -- 4 MiB of float64 (8 bytes each)
    local e = dl.arange(n, {dtype = "float64", device = ENGINE})
    local c
    local d = stats_during(ENGINE, function() c = e:to("cpu") end)
    assert.equal(1, d.to_host)                 -- straight into the new host array
    assert.equal(n - 1, c[n])
    assert.equal(12345, c[12346])
    local back
    d = stats_during(ENGINE, function() back = c:to(ENGINE .. ":1") end)
    assert.equal(1, d.from_host)
    assert.equal(n - 1, back[n])
  end)

  it("between two devices without a copy hook it goes through host memory in chunks", function()
    -- at most DLB_STAGING_BYTES (4 MiB) of staging memory: 16 MiB in 4 steps
    local n = 2 * 1024 * 1024 -- 16 MiB of float64
    local e = dl.arange(n, {dtype = "float64", device = ENGINE})
    local other
    local d = stats_during(ENGINE, function() other = e:to(ENGINE .. ":1") end)
    assert.is_true(d.to_host >= 4 and d.to_host <= 5, "to_host calls: " .. d.to_host)
    assert.is_true(d.from_host >= 4 and d.from_host <= 5, "from_host calls: " .. d.from_host)
    assert.equal(n - 1, other[n])
  end)

  it("a transposed array is read in a few large calls, not one per element", function()
    local e = dl.arange(100 * 100, {dtype = "float32", device = ENGINE}):view{100, 100}
    local c
    local d = stats_during(ENGINE, function() c = e:T():to("cpu") end)
    assert.is_true(d.to_host >= 1 and d.to_host <= 2, "to_host calls: " .. d.to_host)
    assert.equal(e:get(3, 7), c:get(7, 3))
    d = stats_during(ENGINE, function() e:T():contiguous() end)
    assert.is_true(d.to_host <= 2 and d.from_host <= 2,
                   ("to_host %d, from_host %d"):format(d.to_host, d.from_host))
  end)
end)
