-- Comparing whole arrays: NumPy's isclose, allclose and array_equal.
--
--   dl.isclose(a, b, {rtol = 1e-5, atol = 1e-8, equal_nan = false})   a bool array
--   dl.allclose(a, b, opts)            whether every element is close (a boolean)
--   dl.array_equal(a, b, {equal_nan = false})   same shape and elements (a boolean)
--
-- Close means |a - b| <= atol + rtol * |b| (not symmetric: b is the
-- reference), for finite elements; infinities are close only to the same
-- infinity, NaN to nothing unless equal_nan. a and b are arrays, numbers
-- or nested tables, and broadcast together; integers compare as float64.
-- Element-wise elements-wise equality (a:eq(b)) is in comparisons_spec.lua.
local dl = require "dlbridge"
local support = require "support"
local oracle = require "construct_oracle"
local tb = require "testbackend"

local expect_code = support.expect_code
local ENGINE = "engine_construct" -- memory behind handles: copies only
if not support.registered(ENGINE) then tb.register{name = ENGINE} end

local nan, inf = 0 / 0, math.huge

describe("dl.isclose", function()
  it("compares element-wise within rtol * |b| + atol", function()
    local r = dl.isclose({1, 2, 3}, {1 + 1e-9, 2.1, 3})
    assert.equal("bool", r.dtype)
    assert.same({true, false, true}, r:totable())
    assert.same({true, true}, dl.isclose({1, 2}, {1.05, 2.05}, {rtol = 0.1}):totable())
    assert.same({true, false}, dl.isclose({0, 0}, {0.5, 2}, {atol = 1}):totable())
  end)

  it("treats infinities as equal only to themselves, NaN as unequal unless equal_nan", function()
    assert.same({true, false, false}, dl.isclose({inf, inf, nan}, {inf, -inf, nan}):totable())
    assert.same({true, true}, dl.isclose({inf, nan}, {inf, nan}, {equal_nan = true}):totable())
  end)

  it("broadcasts, and takes Lua numbers", function()
    assert.same({{true, false}}, dl.isclose(dl.array{{1, 2}}, 1):totable())
    assert.same({3, 2}, dl.isclose(dl.zeros{3, 1}, dl.zeros{2}).shape)
  end)

  it("compares integers without overflow (as float64)", function()
    local a = dl.array({-128}, {dtype = "int8"})
    assert.same({false}, dl.isclose(a, dl.array({127}, {dtype = "int8"})):totable())
  end)

  it("raises SHAPE for shapes that do not broadcast, ARGUMENT for bad options", function()
    expect_code("SHAPE", function() return dl.isclose(dl.zeros{2}, dl.zeros{3}) end)
    expect_code("ARGUMENT", function() return dl.isclose(1, 1, {tol = 1}) end)
    expect_code("ARGUMENT", function() return dl.isclose(1, 1, {rtol = "1"}) end)
  end)
end)

describe("dl.allclose", function()
  it("tells whether every element is close", function()
    assert.is_true(dl.allclose({1, 2}, {1, 2 + 1e-7}))
    assert.is_false(dl.allclose({1, 2}, {1, 2.1}))
    assert.is_true(dl.allclose(dl.zeros{0}, dl.zeros{0}))
  end)
end)

describe("dl.array_equal", function()
  it("is true for the same shape and elements, false otherwise", function()
    assert.is_true(dl.array_equal({1, 2}, dl.array({1, 2}, {dtype = "float32"})))
    assert.is_false(dl.array_equal({1, 2}, {1, 3}))
    assert.is_false(dl.array_equal({1, 2}, {{1, 2}})) -- shapes differ: no broadcasting
  end)

  it("counts NaNs in the same places as equal with equal_nan", function()
    assert.is_false(dl.array_equal({1, nan}, {1, nan}))
    assert.is_true(dl.array_equal({1, nan}, {1, nan}, {equal_nan = true}))
    assert.is_false(dl.array_equal({nan, 1}, {1, nan}, {equal_nan = true}))
  end)
end)

describe("on a device the host cannot address", function()
  it("raises UNSUPPORTED with a hint to compute on the host", function()
    local a = dl.arange(3):to(ENGINE)
    local err = expect_code("UNSUPPORTED", function() return dl.isclose(a, a) end)
    assert.truthy(tostring(err.hint):find("device_put", 1, true))
    expect_code("UNSUPPORTED", function() return dl.array_equal(a, a) end)
    expect_code("ARGUMENT", function() return dl.allclose(dl.arange(3), a) end) -- two devices
  end)
end)

describe("agrees with NumPy", function()
  it("over random shapes, dtypes, special values and options", function()
    local py, cases = oracle.py, oracle.new()
    for _ = 1, 80 do
      local da, db = oracle.pick(oracle.DTYPES), oracle.pick(oracle.DTYPES)
      local shape = oracle.shape(math.random(1, 3), 1, 3)
      local other = {}
      for d = 1, #shape do other[d] = math.random(3) == 1 and 1 or shape[d] end
      -- NaN and infinities, but not in complex numbers: NumPy 1.24's isclose
      -- multiplies by ones, which makes inf+0j inf+nanj; dlbridge compares the
      -- values given (NumPy 2's result). See docs/manual/computing.md.
      local special = not (da:match("^complex") or db:match("^complex"))
      local a = oracle.array(da, shape, special)
      local b = oracle.array(db, other, special)
      if math.random(4) == 1 then -- equal, or nearly (where the cast is defined)
        local ok, cast = pcall(a.astype, a, db)
        b = ok and cast or a
      end
      local rtol, atol = oracle.pick{1e-5, 1e-3, 0.1, 0}, oracle.pick{1e-8, 0, 0.5}
      local equal_nan = math.random(2) == 1
      local opts = {rtol = rtol, atol = atol, equal_nan = equal_nan}
      local args = string.format("%s, %s, rtol=%s, atol=%s, equal_nan=%s", py(a), py(b), py(rtol),
                                 py(atol), py(equal_nan))
      cases:add("isclose", function() return dl.isclose(a, b, opts) end, "np.isclose(" .. args .. ")")
      cases:add("allclose", function() return dl.allclose(a, b, opts) end,
                "bool(np.allclose(" .. args .. "))")
      local s = special and oracle.pick{0.5, 1, 2, inf, nan} or oracle.pick{0.5, 1, 2}
      cases:add("isclose scalar", function() return dl.isclose(a, s, opts) end,
                string.format("np.isclose(%s, %s, rtol=%s, atol=%s, equal_nan=%s)", py(a), py(s),
                              py(rtol), py(atol), py(equal_nan)))
      cases:add("array_equal", function() return dl.array_equal(a, b, {equal_nan = equal_nan}) end,
                string.format("bool(np.array_equal(%s, %s, equal_nan=%s))", py(a), py(b),
                              py(equal_nan)))
    end
    assert.same({}, cases:run())
  end)
end)
