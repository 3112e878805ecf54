-- iteration_spec.lua -- looping over the first dimension of an array.
--
--   for i, x in dl.pairs(a) do ... end     1-D: x is element i (a Lua value)
--   for i, row in dl.pairs(m) do ... end   n-D: row is a view of row i
--   for i = 1, #a do ... a[i] ... end       the numeric for works as ever
--
-- These work on every Lua. On Lua 5.3 and later ipairs(a) and pairs(a) walk
-- the same way (spec/lua53/iteration_spec.lua); Lua 5.1 and LuaJIT's pairs
-- and ipairs take tables only. Keys are 1..#a in order. Reading a[i] past
-- the end gives nil, as for a Lua table (writing there, and a:get past the
-- end, still raise INDEX). Rows are views: writing into a row writes into
-- the array. A 0-d array has no first dimension: iterating it raises INDEX
-- (read it with a:get()).
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("dl.pairs over a 1-D array", function()
  it("gives each element as a Lua value, and stops after the last", function()
    local a = dl.array{10, 20, 30}
    local seen = {}
    for i, x in dl.pairs(a) do seen[i] = x end
    assert.same({10, 20, 30}, seen)
  end)

  it("visits #a elements, keys 1..#a in order", function()
    local a = dl.arange(7)
    local keys = {}
    for i in dl.pairs(a) do keys[#keys + 1] = i end
    assert.same({1, 2, 3, 4, 5, 6, 7}, keys)
    assert.equal(#a, #keys)
  end)

  it("gives values of the array's dtype: numbers, booleans, {re=, im=}", function()
    for i, x in dl.pairs(dl.array({1, 2}, {dtype = "int32"})) do assert.equal(i, x) end
    for _, x in dl.pairs(dl.array{0.5}) do assert.equal(0.5, x) end
    local bools = {}
    for i, b in dl.pairs(dl.array{true, false}) do bools[i] = b end
    assert.same({true, false}, bools)
    for _, z in dl.pairs(dl.array{{re = 1, im = 2}}) do assert.same({re = 1, im = 2}, z) end
  end)

  it("walks views in their own order (a reversed slice backwards)", function()
    local reversed = dl.array{1, 2, 3, 4}:slice(1, nil, nil, -1)
    local seen = {}
    for i, x in dl.pairs(reversed) do seen[i] = x end
    assert.same({4, 3, 2, 1}, seen)
  end)

  it("can stop early with break", function()
    local first_big
    for i, x in dl.pairs(dl.array{1, 5, 9, 12}) do
      if x > 4 then first_big = i; break end
    end
    assert.equal(2, first_big)
  end)
end)

describe("dl.pairs over an n-D array", function()
  it("gives views of the rows", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    local rows = {}
    for i, row in dl.pairs(m) do
      assert.is_true(dl.is_array(row))
      assert.same({3}, row.shape)
      rows[i] = row:totable()
    end
    assert.same({{1, 2, 3}, {4, 5, 6}}, rows)
  end)

  it("nests: dl.pairs over each row reaches every element", function()
    local m = dl.array{{1, 2}, {3, 4}}
    local total = 0
    for _, row in dl.pairs(m) do
      for _, x in dl.pairs(row) do total = total + x end
    end
    assert.equal(10, total)
  end)

  it("rows are views: writing into one writes into the array", function()
    local m = dl.zeros{2, 3}
    for i, row in dl.pairs(m) do row:fill(i) end
    assert.same({{1, 1, 1}, {2, 2, 2}}, m:totable())
  end)

  it("a 3-D array gives 2-D rows", function()
    local cube = dl.zeros(4, 2, 3)
    local count = 0
    for _, plane in dl.pairs(cube) do
      assert.same({2, 3}, plane.shape)
      count = count + 1
    end
    assert.equal(4, count)
  end)

  it("walks the first dimension of a transposed view: the columns of the original", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    local columns = {}
    for j, column in dl.pairs(m:transpose()) do columns[j] = column:totable() end
    assert.same({{1, 4}, {2, 5}, {3, 6}}, columns)
  end)

  it("gives nothing for an empty array, and the rows of an array with empty rows", function()
    for _ in dl.pairs(dl.zeros{0}) do error("an empty array has no rows") end
    for _ in dl.pairs(dl.zeros{0, 3}) do error("an empty array has no rows") end
    local count = 0
    for _, row in dl.pairs(dl.zeros{3, 0}) do
      count = count + 1
      assert.same({0}, row.shape)
    end
    assert.equal(3, count)
  end)
end)

describe("the numeric for", function()
  it("reads a[i] for i = 1, #a: elements of a 1-D array, rows of an n-D one", function()
    local a = dl.array{10, 20, 30}
    local sum = 0
    for i = 1, #a do sum = sum + a[i] end
    assert.equal(60, sum)
    local m = dl.array{{1, 2}, {3, 4}, {5, 6}}
    local sums = {}
    for i = 1, #m do sums[i] = m[i]:sum() end
    assert.same({3, 7, 11}, sums)
  end)
end)

describe("what iteration does not do", function()
  it("a 0-d array has no first dimension: dl.pairs raises INDEX with a hint", function()
    local scalar = dl.array(5)
    local err = expect_code("INDEX", function() for _ in dl.pairs(scalar) do end end)
    assert.matches("a:get%(%)", err.hint)
    expect_code("SHAPE", function() return #scalar end)
    assert.equal(5, scalar:get())
  end)

  it("a deleted array raises DELETED, also when deleted during the loop", function()
    local a = dl.zeros(3)
    a:delete()
    expect_code("DELETED", function() for _ in dl.pairs(a) do end end)
    local b = dl.zeros(3)
    expect_code("DELETED", function()
      for i in dl.pairs(b) do if i == 2 then b:delete() end end
    end)
  end)

  it("reading past the end is nil only for a[i]: a:get stays strict", function()
    local a = dl.array{1, 2, 3}
    assert.is_nil(a[4])
    expect_code("INDEX", a.get, a, 4)
    expect_code("INDEX", function() return a[0] end) -- no array has index 0
  end)

  it("dl.pairs takes an array, a read-only view or a table: anything else is ARGUMENT", function()
    expect_code("ARGUMENT", dl.pairs, 5)
    expect_code("ARGUMENT", dl.pairs, "abc")
  end)
end)
