-- Sets and keys: membership, orders by several keys, and where each distinct
-- value first appears.
--
-- This file documents:
--   dl.isin(a, test_values, {invert = false})  whether each element of a is
--       among the test values: a bool array of a's shape (a boolean when a
--       is a number); test_values an array, a table or a number, any shape
--   dl.lexsort{key1, key2, ...}  the 1-based positions that sort by several
--       keys, the LAST key first (NumPy's lexsort); or dl.lexsort(rows),
--       the rows of one array the keys
--   dl.unique(a, {return_index = true})  the position of each distinct
--       value's first element; the results come as values, index, inverse,
--       counts (those asked for, in that order); equal_nan = false makes
--       each NaN a value of its own
-- Comparisons are NumPy's: by value after promotion (int32 1 is float 1.0),
-- -0 equal to +0, a NaN never equal to anything (so never in a set).
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code
local nan = 0 / 0

describe("isin", function()
  local party = dl.array{101, 205, 333, 417}

  it("tells which players are in a party", function()
    local players = dl.array{417, 12, 101, 999}
    assert.same({true, false, true, false}, dl.isin(players, party):totable())
    assert.same({false, true, false, true}, dl.isin(players, party, {invert = true}):totable())
  end)

  it("keeps the shape of a, whatever the shape of the test values", function()
    local grid = dl.array{{101, 1}, {2, 333}}
    local m = dl.isin(grid, party:reshape{2, 2})
    assert.same({2, 2}, m.shape)
    assert.same({{true, false}, {false, true}}, m:totable())
  end)

  it("takes tables and numbers, and answers a number with a boolean", function()
    assert.same({true, false}, dl.isin({205, 206}, {205}):totable())
    assert.is_true(dl.isin(333, party))
    assert.is_false(dl.isin(334, party))
    assert.is_true(dl.isin(334, party, {invert = true}))
  end)

  it("compares by value across dtypes, -0 as 0, and never finds NaN", function()
    local ints = dl.array({1, 2, 3}, {dtype = "int32"})
    assert.same({true, false, true}, dl.isin(ints, dl.array{1.0, 3.0, 2.5}):totable())
    local negative_zero = -1 / math.huge -- Lua 5.1 may fold a literal -0.0 into 0
    local x = dl.array{negative_zero, nan, 1.5}
    assert.same({true, false, false}, dl.isin(x, {0, nan}):totable())
    assert.same({false, true, true}, dl.isin(x, {0, nan}, {invert = true}):totable())
  end)

  it("finds nothing among no test values, and nothing for an empty a", function()
    assert.same({false, false}, dl.isin({1, 2}, dl.zeros{0}):totable())
    assert.same({true, true}, dl.isin({1, 2}, dl.zeros{0}, {invert = true}):totable())
    assert.same({0, 3}, dl.isin(dl.zeros{0, 3}, {1}).shape)
  end)

  it("rejects what is not an array or numbers", function()
    expect_code("ARGUMENT", dl.isin, party, "101")
    expect_code("ARGUMENT", dl.isin, party, {1}, {inverted = true})
  end)
end)

describe("lexsort", function()
  -- A leaderboard: by score, highest first, then by name.
  local names = {"cleo", "abe", "dora", "bea", "eli"}
  local name_rank = dl.array{3, 1, 4, 2, 5} -- each name's place in alphabetical order
  local score = dl.array{70, 90, 70, 90, 85}

  it("sorts by the last key first, ties broken by the keys before it", function()
    local order = dl.lexsort{name_rank, -score}:totable()
    local board = {}
    for i, at in ipairs(order) do board[i] = names[at] end
    assert.same({"abe", "bea", "eli", "cleo", "dora"}, board)
  end)

  it("is stable: rows equal in every key keep their order", function()
    assert.same({2, 4, 1, 3}, dl.lexsort{dl.array{2, 1, 2, 1}}:totable())
    assert.same({2, 4, 5, 1, 3}, dl.lexsort{dl.zeros{5}, dl.array{1, 0, 1, 0, 0}}:totable())
  end)

  it("takes the rows of one array as the keys, and one 1-D array as one key", function()
    local keys = dl.array{{1, 2, 3, 4}, {2, 1, 2, 1}}
    assert.same({2, 4, 1, 3}, dl.lexsort(keys):totable())
    assert.same({2, 3, 1}, dl.lexsort(dl.array{30, 10, 20}):totable())
    assert.same({2, 3, 1}, dl.lexsort({30, 10, 20}):totable()) -- a table of numbers: one key
  end)

  it("sorts keys of different dtypes, NaN last as sort does", function()
    local order = dl.lexsort{dl.array{nan, 1.0, 2.0}, dl.array({1, 1, 0}, {dtype = "int8"})}
    assert.same({3, 2, 1}, order:totable())
    assert.same({2, 1}, dl.lexsort{dl.array{true, false}}:totable())
  end)

  it("sorts each row of n-d keys along the last dim", function()
    local a = dl.array{{3, 1, 2}, {1, 1, 0}}
    local b = dl.array{{0, 0, 0}, {1, 0, 1}}
    assert.same({{2, 3, 1}, {2, 3, 1}}, dl.lexsort{a, b}:totable())
  end)

  it("needs at least one key, all of one shape, not 0-d", function()
    expect_code("VALUE", dl.lexsort, {})
    expect_code("SHAPE", dl.lexsort, {dl.array{1, 2}, dl.array{1, 2, 3}})
    expect_code("SHAPE", dl.lexsort, {dl.array(1), dl.array(2)})
    expect_code("ARGUMENT", dl.lexsort, {dl.array{1, 2}, "names"})
  end)
end)

describe("unique with return_index", function()
  it("gives where each distinct value first appears, 1-based", function()
    local seen = dl.array{7, 3, 7, 5, 3}
    local v, first = dl.unique(seen, {return_index = true})
    assert.same({3, 5, 7}, v:totable())
    assert.same({2, 4, 1}, first:totable())
    assert.same(v:totable(), seen:take(first):totable())
  end)

  it("returns values, index, inverse, counts in NumPy's order", function()
    local v, first, inverse, counts = dl.unique({{3, 1}, {3, 3}}, {return_index = true,
                                                return_inverse = true, return_counts = true})
    assert.same({1, 3}, v:totable())
    assert.same({2, 1}, first:totable()) -- positions in the flattened array
    assert.same({2, 1, 2, 2}, inverse:totable()) -- 1-D, as NumPy 1.24
    assert.same({1, 3}, counts:totable())
  end)

  it("counts every NaN as one value unless equal_nan = false", function()
    local x = dl.array{nan, 1, nan}
    local v, first = dl.unique(x, {return_index = true})
    assert.equal(2, v.size)
    assert.same({2, 1}, first:totable())
    v, first = dl.unique(x, {return_index = true, equal_nan = false})
    assert.equal(3, v.size)
    assert.same({2, 1, 3}, first:totable())
  end)
end)
