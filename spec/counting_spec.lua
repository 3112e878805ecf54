-- Counting: how often each small integer occurs, and histograms.
--
-- This file documents:
--   dl.bincount(x, {weights =, minlength = 0})   counts of 0, 1, 2, ... in a
--       1-D integer array: max(max + 1, minlength) bins (bin 1 holds the
--       zeros: the bins are values, not positions); int64, or float64 sums
--       of the weights
--   dl.histogram(a, {bins = 10, range = {lo, hi}, weights =})  counts and
--       edges (two return values): bins evenly spaced over the range (the
--       data's min and max by default), or the edges given as an array
-- x falls in bin b when edges[b] <= x < edges[b + 1]; the last bin also
-- takes its right edge; NaN and values outside the edges count nowhere.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local expect_code = support.expect_code

describe("bincount", function()
  it("counts each value from 0 to the largest", function()
    assert.same({1, 2, 0, 1}, dl.bincount{0, 1, 1, 3}:totable())
    assert.same({1, 2, 0, 1, 0, 0}, dl.bincount({0, 1, 1, 3}, {minlength = 6}):totable())
  end)

  it("sums weights instead of ones", function()
    assert.same({0.5, 3.0}, dl.bincount({0, 1, 1}, {weights = {0.5, 1, 2}}):totable())
  end)

  it("of nothing is minlength zeros", function()
    local c = dl.bincount(dl.zeros({0}, {dtype = "int64"}), {minlength = 2})
    assert.same({0, 0}, c:totable())
    assert.equal("int64", c.dtype)
  end)

  it("counts any integer dtype the same way: int32 labels, uint8 tiles", function()
    local labels = dl.array({2, 0, 2, 1, 2}, {dtype = "int32"})
    assert.same({1, 1, 3}, dl.bincount(labels):totable())
    local tiles = (dl.arange(100000) % 7):astype("uint8")
    local counts = dl.bincount(tiles)
    assert.same({14286, 14286, 14286, 14286, 14286, 14285, 14285}, counts:totable())
    -- every other element: a view counts as well as a copy
    assert.same(dl.bincount(tiles:slice(1, 1, nil, 2):copy()):totable(),
                dl.bincount(tiles:slice(1, 1, nil, 2)):totable())
  end)

  it("raises VALUE for a negative element however far into the array", function()
    local x = (dl.arange(200000) % 10):astype("int32")
    x[150000] = -1
    expect_code("VALUE", function() return dl.bincount(x) end)
  end)

  it("takes non-negative integers of a 1-D array", function()
    expect_code("VALUE", function() return dl.bincount{1, -1} end)
    expect_code("DTYPE", function() return dl.bincount(dl.array({1, 2}, {dtype = "float64"})) end)
    expect_code("SHAPE", function() return dl.bincount(dl.array{{1, 2}}) end)
    expect_code("SHAPE", function() return dl.bincount({1, 2}, {weights = {1}}) end)
    expect_code("VALUE", function() return dl.bincount({1, 2}, {minlength = -1}) end)
  end)
end)

describe("histogram", function()
  it("counts a heightmap into evenly spaced bins in one pass", function()
    local height = dl.array{{0.0, 0.5, 1.0}, {1.5, 2.0, 2.0}}
    local counts, edges = dl.histogram(height, {bins = 4})
    assert.same({1, 1, 1, 3}, counts:totable()) -- the last bin takes 2.0
    assert.same({0.0, 0.5, 1.0, 1.5, 2.0}, edges:totable())
  end)

  it("over a range, leaving out what falls outside", function()
    local counts = dl.histogram({-1, 0, 1, 2, 3}, {bins = 2, range = {0, 2}})
    assert.same({1, 2}, counts:totable())
  end)

  it("into the edges given, with weights", function()
    local counts, edges = dl.histogram({1, 5, 7}, {bins = dl.array{0, 2, 10}, weights = {1, 2, 3}})
    assert.same({1.0, 5.0}, counts:totable())
    assert.same({0, 2, 10}, edges:totable())
  end)

  it("keeps float32 data's dtype in its edges", function()
    local _, edges = dl.histogram(dl.array({1, 2}, {dtype = "float32"}), {bins = 1})
    assert.equal("float32", edges.dtype)
  end)

  it("raises for bins, ranges and data it cannot use", function()
    expect_code("VALUE", function() return dl.histogram({1, 2}, {bins = 0}) end)
    expect_code("VALUE", function() return dl.histogram({1, 2}, {range = {3, 1}}) end)
    expect_code("VALUE", function() return dl.histogram{1, 0 / 0} end) -- no finite range to guess
    expect_code("VALUE", function() return dl.histogram({1, 2}, {bins = dl.array{0, 3, 2}}) end)
    expect_code("DTYPE", function() return dl.histogram(dl.array{{re = 1, im = 1}}) end)
    expect_code("ARGUMENT", function() return dl.histogram({1, 2}, {range = {1}}) end)
  end)

  it("raises OUT_OF_MEMORY for more bins than any memory holds, counting them right", function()
    -- (math.maxinteger bins, Lua 5.3 and later: spec/lua53/counting_spec.lua)
    local e = expect_code("OUT_OF_MEMORY", function() return dl.histogram({1, 2, 3}, {bins = 2 ^ 62}) end)
    assert.truthy(e.message:find("the 4611686018427387905 edges of 4611686018427387904 bins", 1,
                                 true), e.message)
  end)

  it("counts its bins and edges against the host's memory limit", function()
    -- Bins a script asks for are memory: under a memory limit set by the host
    -- (dlb_set_memory_limit; testbackend's set_memory_limit stands in for it),
    -- bins that do not fit raise OUT_OF_MEMORY before anything is allocated,
    -- also when the edges given are a view that holds no memory of its own.
    finally(function() tb.set_memory_limit(0) end)
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 64 * 1024 * 1024)
    expect_code("OUT_OF_MEMORY", function() return dl.histogram({1, 2, 3}, {bins = 2e8}) end)
    expect_code("OUT_OF_MEMORY", function()
      return dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(2e8)})
    end)
    expect_code("OUT_OF_MEMORY", function()
      return dl.histogram({1, 2, 3}, {bins = dl.zeros(1):expand(2e8), weights = {1, 1, 1}})
    end)
    -- what fits is counted as ever
    local counts, edges = dl.histogram({1, 2, 3}, {bins = 1e6})
    assert.equal(1e6, counts.size)
    assert.equal(3, counts:sum())
    assert.equal(1e6 + 1, edges.size)
    assert.equal(3, dl.histogram({1, 2, 3}, {bins = dl.arange(1e6)}):sum())
  end)

  it("bins finite data into a range wider than its dtype holds without going astray", function()
    -- float32 edges of range {-1e300, 1e300} are -inf, 0, inf: 0 falls in the second bin
    local counts, edges = dl.histogram(dl.array({0}, {dtype = "float32"}),
                                       {bins = 2, range = {-1e300, 1e300}})
    assert.same({0, 1}, counts:totable())
    assert.same({-math.huge, 0, math.huge}, edges:totable())
    -- a range narrower than any float32: every edge rounds to 0
    counts = dl.histogram(dl.array({0, 1, 2}, {dtype = "float32"}), {bins = 3, range = {0, 5e-324}})
    assert.equal(1, counts:sum())
  end)
end)
