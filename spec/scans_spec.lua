-- Scans and differences: running sums and products, and differences of
-- neighbours.
--
-- This file documents:
--   a:cumsum(opts)   dl.cumsum(a, opts)    running sums along a dim
--   a:cumprod(opts)  dl.cumprod(a, opts)   running products along a dim
--       opts: a dim, or {dim =, dtype =, out =}; no dim: the flattened a
--   dl.diff(a, {n = 1, dim = -1})          a[2:] - a[:-1], n times
-- cumsum and cumprod give the dtypes sum and prod give (bool and signed
-- integers int64, unsigned uint64, others their own) unless dtype says;
-- each partial result is rounded to that dtype (NumPy's accumulate), so
-- integers wrap and float16 rounds at every step.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("cumsum and cumprod", function()
  it("run over the flattened array without a dim", function()
    assert.same({1, 3, 6, 10}, dl.array{{1, 2}, {3, 4}}:cumsum():totable())
    assert.same({1, 2, 6, 24}, dl.cumprod(dl.array{{1, 2}, {3, 4}}):totable())
  end)

  it("run along the dim given", function()
    local a = dl.array{{1, 2}, {3, 4}}
    assert.same({{1, 2}, {4, 6}}, a:cumsum(1):totable())
    assert.same({{1, 2}, {3, 12}}, a:cumprod{dim = -1}:totable())
  end)

  it("give int64 for bool and integers, or the dtype asked for", function()
    assert.equal("int64", dl.array({1, 2}, {dtype = "int8"}):cumsum().dtype)
    assert.same({1, 1, 2}, dl.array{true, false, true}:cumsum():totable())
    local f = dl.array({1, 2, 3}, {dtype = "int32"}):cumsum{dtype = "float32"}
    assert.equal("float32", f.dtype)
    assert.same({1.0, 3.0, 6.0}, f:totable())
  end)

  it("wrap integers as NumPy does", function()
    -- {math.maxinteger, 1} as int64, made from its bytes on every Lua
    -- (written as numbers on Lua 5.3 and later: spec/lua53/scans_spec.lua)
    local big = dl.frombytes("\255\255\255\255\255\255\255\127" .. "\1\0\0\0\0\0\0\0", "int64")
    assert.equal("\0\0\0\0\0\0\0\128", big:cumsum():narrow(1, 2, 1):tobytes()) -- math.mininteger
  end)

  it("write into out, which may be the input itself", function()
    local a = dl.array({1, 2, 3}, {dtype = "float64"})
    a:cumsum{dim = 1, out = a}
    assert.same({1.0, 3.0, 6.0}, a:totable())
    expect_code("SHAPE", function() return a:cumsum{dim = 1, out = dl.zeros{2}} end)
    expect_code("DTYPE", function() return a:cumsum{dim = 1, out = dl.zeros({3}, {dtype = "int32"})} end)
  end)
end)

describe("diff", function()
  it("subtracts neighbours along the last dim, n times", function()
    local squares = dl.array{1, 4, 9, 16}
    assert.same({3, 5, 7}, dl.diff(squares):totable())
    assert.same({2, 2}, dl.diff(squares, {n = 2}):totable())
    assert.same({{2, 2}}, dl.diff(dl.array{{1, 2}, {3, 4}}, {dim = 1}):totable())
  end)

  it("of bool arrays says where neighbours differ", function()
    assert.same({true, false}, dl.diff(dl.array{false, true, true}):totable())
  end)

  it("ends empty when the dim is no longer than n, and refuses a negative n", function()
    assert.same({0}, dl.diff(dl.array{1, 2}, {n = 5}).shape)
    expect_code("VALUE", function() return dl.diff(dl.array{1, 2}, {n = -1}) end)
    expect_code("INDEX", function() return dl.diff(dl.array(3)) end)
  end)
end)
