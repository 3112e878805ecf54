-- Grouped updates: adding, multiplying, or keeping the largest or smallest
-- value at indices that may repeat.
--
-- This file documents:
--   dl.scatter_add(a, idx, values, opts)  a[idx] += values   (np.add.at)
--   dl.scatter_mul(a, idx, values, opts)  a[idx] *= values   (np.multiply.at)
--   dl.scatter_max(a, idx, values, opts)  a[idx] = max(a[idx], values)
--   dl.scatter_min(a, idx, values, opts)  a[idx] = min(a[idx], values)
-- Each writes a in place and returns it. Unlike a[idx] = a[idx] + values,
-- an index that repeats counts every time it appears. idx picks along dim 1,
-- or along opts.dim ({dim = 2}: columns); values have the shape of
-- a:take(idx, dim), or one that broadcasts to it (one number for all).
-- Indices are 1-based, negative from the end; one out of range raises INDEX
-- before anything is written. values of a wider dtype of a's kind are fine
-- (the update is computed in it, then stored in a's dtype); values that a's
-- dtype cannot take without changing kind (floats into an int array) raise
-- DTYPE.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("dl.scatter_add", function()
  it("counts a histogram: one per occurrence, repeated indices all counting", function()
    local rolls = dl.array({3, 1, 3, 6, 3, 1}, {dtype = "int64"})
    local counts = dl.zeros({6}, {dtype = "int64"})
    dl.scatter_add(counts, rolls, 1)
    assert.same({2, 0, 3, 0, 0, 1}, counts:totable())
  end)

  it("sums values into groups (a total per customer)", function()
    local customer = dl.array({2, 1, 2, 3, 2}, {dtype = "int32"})
    local amount = dl.array{10.5, 3, 1.5, 7, 2}
    local total = dl.scatter_add(dl.zeros{3}, customer, amount)
    assert.same({3, 14, 7}, total:totable())
  end)

  it("returns the array it wrote, so calls chain", function()
    local a = dl.zeros{3}
    assert.equal(a, dl.scatter_add(a, {1}, 5))
    assert.same({6, 0, 0}, dl.scatter_add(a, {1}, 1):totable())
  end)

  it("counts negative indices from the end", function()
    local a = dl.scatter_add(dl.zeros{4}, {-1, 1, -1}, dl.array{1, 2, 3})
    assert.same({2, 0, 0, 4}, a:totable())
  end)

  it("adds whole rows: idx picks rows, values has one row per index", function()
    local a = dl.zeros{3, 2}
    dl.scatter_add(a, {1, 3, 1}, dl.array{{1, 2}, {3, 4}, {5, 6}})
    assert.same({{6, 8}, {0, 0}, {3, 4}}, a:totable())
  end)

  it("adds along another dim with {dim = 2} (torch's index_add)", function()
    local a = dl.zeros{2, 3}
    dl.scatter_add(a, {3, 3, 1}, dl.array{{1, 2, 3}, {4, 5, 6}}, {dim = 2})
    assert.same({{3, 0, 3}, {6, 0, 9}}, a:totable())
  end)

  it("broadcasts values like NumPy: one row for every index", function()
    local a = dl.zeros{3, 2}
    dl.scatter_add(a, {2, 2}, dl.array{1, 10})
    assert.same({{0, 0}, {2, 20}, {0, 0}}, a:totable())
  end)

  it("writes through views: a column of a matrix, a transposed matrix", function()
    local m = dl.zeros{2, 3}
    dl.scatter_add(m:select(2, 2), {2, 2}, 1)
    assert.same({{0, 0, 0}, {0, 2, 0}}, m:totable())
    dl.scatter_add(m:transpose(), {3}, dl.array{7, 8})
    assert.same({{0, 0, 7}, {0, 2, 8}}, m:totable())
  end)

  it("wraps integers like NumPy (uint8 255 + 1 is 0)", function()
    local a = dl.array({255, 0}, {dtype = "uint8"})
    dl.scatter_add(a, {1, 2, 2}, 1)
    assert.same({0, 2}, a:totable())
  end)

  it("on bool arrays is a logical or", function()
    local seen = dl.zeros({4}, {dtype = "bool"})
    dl.scatter_add(seen, {2, 4, 2}, true)
    assert.same({false, true, false, true}, seen:totable())
  end)

  it("computes in wider values' dtype, then stores in a's (as NumPy's ufunc.at)", function()
    -- max(50, 300) is 300 in int16, which wraps to 44 in int8
    local a = dl.array({50, 7}, {dtype = "int8"})
    dl.scatter_max(a, {1}, dl.array({300}, {dtype = "int16"}))
    assert.same({44, 7}, a:totable())
    -- float64 sums rounded to float32 once per update
    local f = dl.zeros({1}, {dtype = "float32"})
    dl.scatter_add(f, {1, 1}, dl.array({0.5, 0.25}, {dtype = "float64"}))
    assert.equal(0.75, f:item(1))
  end)

  it("reads values that are a view of a as they were before the call", function()
    local a = dl.array{1, 2, 3, 4}
    dl.scatter_add(a, {1, 2, 3, 4}, a:slice(1, nil, nil, -1))
    assert.same({5, 5, 5, 5}, a:totable())
  end)

  it("reads indices that are a view of a as they were before the call", function()
    local a = dl.array({1, 1, 2, 4}, {dtype = "int64"})
    dl.scatter_add(a, a, 1)
    assert.same({3, 2, 2, 5}, a:totable())
  end)

  it("does nothing with no indices", function()
    local a = dl.array{1, 2}
    dl.scatter_add(a, dl.zeros({0}, {dtype = "int64"}), 5)
    assert.same({1, 2}, a:totable())
  end)
end)

describe("dl.scatter_max and dl.scatter_min", function()
  it("keep each player's best score", function()
    local player = dl.array({1, 2, 1, 3, 2, 1}, {dtype = "int64"})
    local score = dl.array{30, 12, 45, 7, 19, 41}
    local best = dl.full({3}, -math.huge)
    dl.scatter_max(best, player, score)
    assert.same({45, 19, 7}, best:totable())
  end)

  it("keep each player's worst score", function()
    local player = {1, 2, 1, 3, 2, 1} -- a table of indices becomes int64
    local worst = dl.full({3}, math.huge)
    dl.scatter_min(worst, player, dl.array{30, 12, 45, 7, 19, 41})
    assert.same({30, 12, 7}, worst:totable())
  end)

  it("propagate NaN, as np.maximum and np.minimum do", function()
    local nan = 0 / 0
    local a = dl.scatter_max(dl.array({1, 2}, {dtype = "float64"}), {1, 1}, dl.array{nan, 5})
    assert.is_true(a:item(1) ~= a:item(1))
    local b = dl.scatter_min(dl.array({1, 2}, {dtype = "float64"}), {2}, nan)
    assert.is_true(b:item(2) ~= b:item(2))
  end)

  it("on bool arrays are or (max) and and (min)", function()
    local any = dl.scatter_max(dl.zeros({2}, {dtype = "bool"}), {1, 1}, dl.array{false, true})
    assert.same({true, false}, any:totable())
    local all = dl.scatter_min(dl.ones({2}, {dtype = "bool"}), {1, 1}, dl.array{true, false})
    assert.same({false, true}, all:totable())
  end)
end)

describe("dl.scatter_mul", function()
  it("multiplies once per occurrence", function()
    local a = dl.scatter_mul(dl.ones{3}, {1, 1, 3}, dl.array{2, 5, 4})
    assert.same({10, 1, 4}, a:totable())
  end)

  it("along a dim: scales columns", function()
    local a = dl.ones{2, 2}
    dl.scatter_mul(a, {2}, 3, {dim = 2})
    assert.same({{1, 3}, {1, 3}}, a:totable())
  end)
end)

describe("grouped updates refuse", function()
  it("an index out of range (INDEX), writing nothing", function()
    local a = dl.zeros{3}
    expect_code("INDEX", dl.scatter_add, a, {1, 4}, 1)
    expect_code("INDEX", dl.scatter_add, a, {-4}, 1)
    expect_code("INDEX", dl.scatter_add, a, {0}, 1)
    assert.same({0, 0, 0}, a:totable())
  end)

  it("float indices or bool indices (DTYPE)", function()
    expect_code("DTYPE", dl.scatter_add, dl.zeros{3}, dl.array{1.5}, 1)
    expect_code("DTYPE", dl.scatter_add, dl.zeros{3}, dl.array{true}, 1)
  end)

  it("values that would change the array's kind (DTYPE): floats into ints", function()
    local counts = dl.zeros({3}, {dtype = "int32"})
    expect_code("DTYPE", dl.scatter_add, counts, {1}, dl.array({0.5}, {dtype = "float64"}))
    expect_code("DTYPE", dl.scatter_add, dl.zeros({3}, {dtype = "uint8"}), {1},
      dl.array({1}, {dtype = "int8"}))
  end)

  it("values that do not broadcast to the updates (SHAPE)", function()
    expect_code("SHAPE", dl.scatter_add, dl.zeros{3}, {1, 2}, dl.array{1, 2, 3})
    -- (as NumPy: values may not have more dims than the updates, even of extent 1)
    expect_code("SHAPE", dl.scatter_add, dl.zeros{3}, {1}, dl.zeros{1, 1})
  end)

  it("maxima and minima of complex numbers, which have no order (DTYPE)", function()
    local z = dl.zeros({2}, {dtype = "complex128"})
    expect_code("DTYPE", dl.scatter_max, z, {1}, 1)
    dl.scatter_add(z, {2, 2}, 1) -- sums and products are fine
    assert.same({re = 2.0, im = 0.0}, z:item(2))
  end)

  it("a read-only array, such as a broadcast view (READ_ONLY)", function()
    local expanded = dl.zeros{1, 3}:expand{2, 3}
    expect_code("READ_ONLY", dl.scatter_add, expanded, {1}, 1)
  end)

  it("a 0-d array (INDEX) and a dim outside the array (INDEX)", function()
    expect_code("INDEX", dl.scatter_add, dl.array(5), {1}, 1)
    expect_code("INDEX", dl.scatter_add, dl.zeros{2}, {1}, 1, {dim = 2})
  end)

  it("unknown options (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.scatter_add, dl.zeros{2}, {1}, 1, {axis = 1})
  end)
end)
