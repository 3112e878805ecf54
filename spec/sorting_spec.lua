-- Sorting: ordered copies, the positions that order, the k largest, the
-- distinct values, and insertion points.
--
-- This file documents:
--   a:sort(opts)         dl.sort(a, opts)      a sorted copy along a dim
--   a:argsort(opts)      dl.argsort(a, opts)   the 1-based positions that sort it
--       opts: a dim, or {dim = -1, descending = false, stable = false}
--   a:topk(k, opts)      dl.topk(a, k, opts)   the k largest (or smallest) and
--       their positions, two return values; opts {dim = -1, largest = true}
--   dl.unique(a, {return_inverse =, return_counts =})  sorted distinct values
--       of the flattened a [, inverse][, counts] as extra return values
--       (return_index and equal_nan: spec/sets_spec.lua)
--   a:searchsorted(v, {side = "left"|"right"})  1-based insertion points
-- The order is NumPy's: NaN after +inf, -0 equal to +0, complex numbers by
-- real then imaginary part with NaN parts last, false before true.
-- descending is the reverse order (NaN first). stable keeps equal elements
-- in their order; ties in topk go to the element that comes first.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code
local nan = 0 / 0

describe("sort", function()
  it("sorts along the last dim by default, or the one given", function()
    local a = dl.array{{3, 1, 2}, {9, 7, 8}}
    assert.same({{1, 2, 3}, {7, 8, 9}}, a:sort():totable())
    assert.same({{3, 1, 2}, {9, 7, 8}}, dl.sort(a, 1):totable())
    assert.same({{3, 2, 1}, {9, 8, 7}}, a:sort{descending = true}:totable())
  end)

  it("puts NaN last (first when descending), as NumPy", function()
    local s = dl.array{2.0, nan, -1.0, math.huge}:sort():totable()
    assert.same({-1.0, 2.0, math.huge}, {s[1], s[2], s[3]})
    assert.is_true(s[4] ~= s[4])
    local d = dl.array{2.0, nan, -1.0}:sort{descending = true}:totable()
    assert.is_true(d[1] ~= d[1])
    assert.same({2.0, -1.0}, {d[2], d[3]})
  end)

  it("sorts every dtype: bool, float16, complex", function()
    assert.same({false, true, true}, dl.array{true, false, true}:sort():totable())
    assert.same({-2.0, 0.5, 3.0}, dl.array({3, -2, 0.5}, {dtype = "float16"}):sort():totable())
    local b = dl.array({3, nan, -2, 0.5}, {dtype = "bfloat16"}):sort():totable()
    assert.same({-2.0, 0.5, 3.0}, {b[1], b[2], b[3]})
    assert.is_true(b[4] ~= b[4]) -- bfloat16 has no NumPy dtype: the oracle cannot check it
    assert.same({1, 3, 2}, dl.array({3, 1, 2}, {dtype = "bfloat16"}):argsort{descending = true}:totable())
    local c = dl.array({{re = 1, im = 2}, {re = 1, im = -1}, {re = 0, im = 5}}):sort():totable()
    assert.same({{re = 0, im = 5}, {re = 1, im = -1}, {re = 1, im = 2}}, c)
  end)

  it("sorts strided views without copying them first", function()
    local a = dl.array{5, 4, 3, 2, 1, 0}:slice(1, nil, nil, -2) -- 0, 2, 4
    assert.same({0, 2, 4}, a:sort():totable())
  end)

  it("keeps equal elements in order with stable = true", function()
    local keys = dl.array{2, 1, 2, 1}
    assert.same({2, 4, 1, 3}, keys:argsort{stable = true}:totable())
    assert.same({1, 3, 2, 4}, keys:argsort{stable = true, descending = true}:totable())
  end)

  it("needs a dim to sort along", function()
    expect_code("INDEX", function() return dl.array(5):sort() end)
    expect_code("INDEX", function() return dl.array{1, 2}:sort(2) end)
    expect_code("ARGUMENT", function() return dl.array{1, 2}:sort{order = "asc"} end)
  end)
end)

describe("argsort", function()
  it("gives the 1-based positions that sort the array", function()
    local a = dl.array{30, 10, 20}
    assert.same({2, 3, 1}, a:argsort():totable())
    assert.same({10, 20, 30}, a:take(a:argsort()):totable())
  end)
end)

describe("topk", function()
  it("returns the k largest and their positions, largest first", function()
    local probs = dl.array{{0.1, 0.6, 0.3}, {0.5, 0.2, 0.3}}
    local p, class = dl.topk(probs, 2)
    assert.same({{0.6, 0.3}, {0.5, 0.3}}, p:totable())
    assert.same({{2, 3}, {1, 3}}, class:totable())
  end)

  it("the k smallest with largest = false, along any dim", function()
    local v, i = dl.array{{4, 1}, {2, 3}}:topk(1, {dim = 1, largest = false})
    assert.same({{2, 1}}, v:totable())
    assert.same({{2, 1}}, i:totable())
  end)

  it("breaks ties by position and counts NaN as the largest", function()
    local v, i = dl.topk(dl.array{1, 5, 5, nan, 5}, 3)
    assert.same({4, 2, 3}, i:totable()) -- NaN, then the first two fives
    assert.same({5, 5}, {v:totable()[2], v:totable()[3]})
  end)

  it("takes k from 0 to the dim's extent", function()
    assert.same({0}, dl.topk(dl.array{1, 2}, 0).shape)
    expect_code("VALUE", function() return dl.topk(dl.array{1, 2}, 3) end)
    expect_code("VALUE", function() return dl.topk(dl.array{1, 2}, -1) end)
  end)
end)

describe("unique", function()
  it("gives the sorted distinct values of the flattened array", function()
    assert.same({1, 2, 3}, dl.unique(dl.array{{3, 1}, {3, 2}}):totable())
    assert.same({0}, dl.unique(dl.zeros{0}).shape)
  end)

  it("with the inverse and the counts, in that order", function()
    local v, inverse, counts = dl.unique({3, 1, 3, 3}, {return_inverse = true, return_counts = true})
    assert.same({1, 3}, v:totable())
    assert.same({2, 1, 2, 2}, inverse:totable()) -- v[inverse] is the input
    assert.same({1, 3}, counts:totable())
    assert.same({3, 1, 3, 3}, v:take(inverse):totable())
  end)

  it("counts every NaN as one value, and -0 as 0", function()
    local negative_zero = -1 / math.huge -- Lua 5.1 may fold a literal -0.0 into 0
    local v = dl.unique(dl.array{nan, 0.0, nan, negative_zero}):totable()
    assert.equal(2, #v)
    assert.equal(0, v[1])
    assert.is_true(v[2] ~= v[2])
  end)
end)

describe("searchsorted", function()
  local edges = dl.array{0, 10, 20}

  it("gives 1-based insertion points: left before equals, right after", function()
    assert.equal(2, edges:searchsorted(10))
    assert.equal(3, edges:searchsorted(10, {side = "right"}))
    assert.same({1, 4}, edges:searchsorted({-5, 25}):totable())
  end)

  it("needs a 1-D sorted array and a known side", function()
    expect_code("SHAPE", function() return dl.zeros{2, 2}:searchsorted(1) end)
    expect_code("ARGUMENT", function() return edges:searchsorted(1, {side = "middle"}) end)
  end)
end)
