-- Element-wise comparisons, logic, where and clip.
--
-- Lua turns ==, < and <= into one boolean, so element-wise comparisons are methods:
--   a:eq(b)  a:ne(b)  a:lt(b)  a:le(b)  a:gt(b)  a:ge(b)        -> bool arrays
--   dl.equal, dl.not_equal, dl.less, dl.less_equal, dl.greater, dl.greater_equal (same, as functions)
--   dl.logical_and(a, b), dl.logical_or, dl.logical_xor, dl.logical_not(a)   (any dtype: x ~= 0)
--   dl.where(cond, x, y)      x where cond is true, else y (broadcast together)
--   dl.clip(a, lo, hi)        a limited to [lo, hi]; either bound may be nil
-- `a == b` stays Lua's identity test, and `a < b` raises ARGUMENT pointing here.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("comparisons", function()
  it("give bool arrays, element by element", function()
    local a = dl.array{1, 2, 3}
    assert.same({false, true, false}, a:eq(2):totable())
    assert.same({true, false, true}, a:ne(2):totable())
    assert.same({true, false, false}, a:lt(2):totable())
    assert.same({true, true, false}, a:le(2):totable())
    assert.same({false, false, true}, a:gt(2):totable())
    assert.same({false, true, true}, a:ge(2):totable())
    assert.equal("bool", a:gt(2).dtype)
  end)

  it("exist as functions too, and broadcast", function()
    local m = dl.array{{1, 5}, {7, 2}}
    assert.same({{false, true}, {true, false}}, dl.greater(m, dl.array{{3}, {5}}):totable())
  end)

  it("are exact with numbers outside the array's dtype (no VALUE error)", function()
    local u8 = dl.array({0, 255}, {dtype = "uint8"})
    assert.same({true, true}, u8:lt(300):totable())
    assert.same({false, false}, u8:eq(-1):totable())
    assert.same({true, true}, dl.array({1, 2}, {dtype = "float32"}):lt(1e300):totable())
  end)

  it("treat NaN as unequal to everything", function()
    local a = dl.array{0 / 0, 1}
    assert.same({false, true}, a:eq(a):totable())
    assert.same({true, false}, a:ne(a):totable())
  end)

  it("compare complex numbers for equality only", function()
    local z = dl.array({{re = 1, im = 2}}, {dtype = "complex64"})
    assert.same({true}, z:eq({re = 1, im = 2}):totable())
    expect_code("DTYPE", function() return z:lt(1) end)
  end)

  it("count with sum-like tools: a bool array is a mask", function()
    local mask = dl.arange(10):gt(6)
    assert.same({false, false, false, false, false, false, false, true, true, true}, mask:totable())
  end)
end)

describe("logical functions", function()
  it("treat any nonzero value as true", function()
    local a, b = dl.array{0, 1, 2, 0}, dl.array{0.0, 0.0, 3.5, 1.0}
    assert.same({false, false, true, false}, dl.logical_and(a, b):totable())
    assert.same({false, true, true, true}, dl.logical_or(a, b):totable())
    assert.same({false, true, false, true}, dl.logical_xor(a, b):totable())
    assert.same({true, false, false, true}, dl.logical_not(a):totable())
  end)
end)

describe("dl.where", function()
  it("picks from x where cond is true, else from y", function()
    local a = dl.array{1, -2, 3, -4}
    assert.same({1, 0, 3, 0}, dl.where(a:gt(0), a, 0):totable())
  end)

  it("broadcasts cond, x and y together and promotes x with y", function()
    local cond = dl.array{{true}, {false}}
    local r = dl.where(cond, dl.array{1, 2}, dl.array({0.5, 0.25}, {dtype = "float32"}))
    assert.equal("float64", r.dtype) -- int64 with float32 is float64 (NumPy)
    assert.same({{1, 2}, {0.5, 0.25}}, r:totable())
  end)

  it("takes any dtype as the condition (nonzero is true)", function()
    assert.same({10, 20}, dl.where(dl.array{0, 5}, dl.array{1, 2} * 10, dl.array{10, 0}):totable())
  end)
end)

describe("dl.clip", function()
  it("limits values to [lo, hi] and keeps the dtype", function()
    local a = dl.array({0, 50, 100, 200}, {dtype = "uint8"})
    local c = dl.clip(a, 10, 150)
    assert.same({10, 50, 100, 150}, c:totable())
    assert.equal("uint8", c.dtype)
    assert.same({10, 50, 100, 200}, a:clip(10, nil):totable())
    assert.same({0, 50, 100, 150}, a:clip(nil, 150):totable())
  end)

  it("needs at least one bound", function()
    expect_code("ARGUMENT", function() return dl.clip(dl.zeros{2}) end)
  end)
end)
