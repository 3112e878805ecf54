-- Selecting by arrays: boolean masks and integer indices.
--
-- This file documents:
--   a[mask]            the elements where a bool mask is true, as a new 1-D
--                      array (row-major order); a mask of a's first k dims
--                      selects sub-arrays: shape (count, rest...)
--   a[mask] = v        writes one value, or one per selected element
--   a[idx]             idx an integer array: a:take(idx, 1), rows of a
--   a[idx] = v         writes those rows
--   a:take(idx, opts)  dl.take(a, idx, opts)  elements at indices along a dim
--                      (opts a dim or {dim =, out =}; no dim: the flattened a)
--   dl.take_along_dim(a, idx, dim)           picks along dim, idx of a's ndim
--   dl.put_along_dim(a, idx, values, dim)    writes along dim, in place
--   a:nonzero()        dl.nonzero(a)          one index array per dim
--   dl.argwhere(a)                            the (count, ndim) index array
-- Indices are 1-based, negative from the end, as everywhere in dlbridge, and
-- the indices these functions return are 1-based too. An index out of range
-- raises INDEX before anything is written.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local expect_code = support.expect_code

describe("a boolean mask", function()
  it("selects the elements where it is true, in row-major order", function()
    local g = dl.array{{5, 1, 3}, {2, 8, 0}}
    assert.same({5, 3, 8}, g[g:gt(2)]:totable())
  end)

  it("writes one value into every selected element: g[g:lt(2)] = 0", function()
    local g = dl.array{{5, 1, 3}, {2, 8, 0}}
    g[g:lt(2)] = 0
    assert.same({{5, 0, 3}, {2, 8, 0}}, g:totable())
  end)

  it("writes one value per selected element from an array or a table", function()
    local a = dl.array({1, -2, 3, -4}, {dtype = "float64"})
    local negative = a:lt(0)
    a[negative] = {20, 40}
    assert.same({1.0, 20.0, 3.0, 40.0}, a:totable())
    a[negative] = dl.array{7, 8}
    assert.same({1.0, 7.0, 3.0, 8.0}, a:totable())
  end)

  it("of the first dims selects whole rows", function()
    local frames = dl.arange(12):reshape{3, 4}
    local keep = dl.array{true, false, true}
    assert.same({{0, 1, 2, 3}, {8, 9, 10, 11}}, frames[keep]:totable())
    frames[keep] = -1
    assert.same({-1, 4, -1}, frames:slice(2, 1, 1):reshape{3}:totable())
  end)

  it("that selects nothing gives an empty array", function()
    local a = dl.array{1, 2, 3}
    assert.same({0}, a[a:gt(10)].shape)
    a[a:gt(10)] = 5 -- writes nothing
    assert.same({1, 2, 3}, a:totable())
  end)

  it("with few true values picks only those: M[mask] = v resets some rows", function()
    -- 1000 particles; the few whose id is a multiple of 333 start over
    local id = dl.arange(1, 1001)
    local pos = dl.ones{1000, 3}
    local reset = (id % 333):eq(0)
    pos[reset] = 0
    assert.same({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, pos[reset]:totable())
    assert.equal(3000 - 9, pos:sum())
    assert.same({333, 666, 999}, reset:nonzero():totable())
    assert.same({333, 666, 999}, id[reset]:totable())
  end)

  it("picks a true value in its last element, and at any length", function()
    for _, n in ipairs{1, 63, 64, 65, 4097} do
      local a = dl.arange(1, n + 1)
      local last = a:eq(n)
      assert.same({n}, a[last]:totable())
      assert.same({n}, last:nonzero():totable())
      a[last] = -1
      assert.equal(-1, a[n])
    end
  end)

  it("may be a view: every other element, reversed", function()
    local a = dl.arange(1, 7)
    local flags = dl.array{true, false, false, false, true, true, false, true, true, false, true, true}
    local every_other = flags:slice(1, 1, 12, 2) -- true false true false true true
    assert.same({1, 3, 5, 6}, a[every_other]:totable())
    local reversed = flags:slice(1, 6, 1, -1) -- true true false false false true
    assert.same({1, 2, 6}, a[reversed]:totable())
  end)

  it("must be bool and match the array's first dims", function()
    local a = dl.array{1, 2, 3}
    expect_code("SHAPE", function() return a[dl.array{true, false}] end)
    expect_code("SHAPE", function() a[dl.array{true, false}] = 1 end)
    expect_code("DTYPE", function() return a[dl.array({1, 0, 1}, {dtype = "float64"})] end)
    expect_code("SHAPE", function() a[a:gt(1)] = {1, 2, 3} end) -- two selected, three values
    expect_code("READ_ONLY", function() local r = support.readonly_array(); r[r:gt(1)] = 0 end)
  end)
end)

describe("integer indices", function()
  it("a[idx] takes rows (or elements of a 1-D array)", function()
    local a = dl.array{{1, 2}, {3, 4}, {5, 6}}
    assert.same({{5, 6}, {1, 2}}, a[dl.array{3, 1}]:totable())
    assert.same({30, 10}, dl.array{10, 20, 30}[dl.array{-1, 1}]:totable())
  end)

  it("a[idx] = v writes rows", function()
    local a = dl.zeros({3, 2}, {dtype = "int32"})
    a[dl.array{1, 3}] = 7
    assert.same({{7, 7}, {0, 0}, {7, 7}}, a:totable())
  end)

  it("a:take(idx, dim): indices shaped any way, negative from the end", function()
    local a = dl.array{{10, 20, 30}, {40, 50, 60}}
    assert.same({{30, 10}, {60, 40}}, a:take({3, 1}, 2):totable())
    assert.same({2, 2, 3}, a:take(dl.array{{1, 2}, {2, 1}}, 1).shape) -- idx's shape replaces dim 1
    assert.same({60, 10}, a:take{-1, 1}:totable()) -- no dim: the flattened array
  end)

  it("a:take writes into out", function()
    local a = dl.array{1.5, 2.5, 3.5}
    local out = dl.zeros{2}
    assert.equal(out, a:take({3, 1}, {dim = 1, out = out}))
    assert.same({3.5, 1.5}, out:totable())
  end)

  it("out of range, or not integers, raise with a hint", function()
    local a = dl.array{1, 2, 3}
    local e = expect_code("INDEX", function() return a:take{4} end)
    assert.truthy(e.message:find("index 4 is out of range", 1, true))
    expect_code("INDEX", function() return a:take{0} end) -- indices are 1-based
    expect_code("INDEX", function() return a:take{-4} end)
    expect_code("DTYPE", function() return a:take(dl.array{1.5}) end)
    expect_code("VALUE", function() return a:take{1.5} end) -- a table becomes int64, strictly
    expect_code("INDEX", function() return dl.zeros{0}:take{1} end)
  end)

  it("raise INDEX for any index outside the dim, however far: -2^53 too", function()
    -- every kind of element (the gathers of 4 and 8 bytes have their own loops)
    -- (math.mininteger, math.mininteger + 1 and math.maxinteger, Lua 5.3 and later:
    -- spec/lua53/selecting_spec.lua; Lua 5.1, 5.2 and LuaJIT have integers to 2^53)
    for _, dtype in ipairs{"float32", "int64", "float64", "int8", "complex128"} do
      local a = dl.arange(4):astype(dtype)
      local before = a:totable()
      -- -2^53, 1 - 2^53, 2^53, written as integers (2 ^ 53 is a float on Lua 5.3 and later)
      for _, bad in ipairs{-9007199254740992, -9007199254740991, 9007199254740992, -5, 5} do
        local e = expect_code("INDEX", function() return dl.take(a, {1, bad, 2}) end)
        assert.truthy(e.message:find(("index %d is out of range"):format(bad), 1, true), e.message)
        expect_code("INDEX", function() return a[dl.array{2, bad}] end)
        expect_code("INDEX", function() return dl.take_along_dim(a, {3, bad}, 1) end)
        -- writes check every index first: nothing is written
        expect_code("INDEX", function() a[dl.array{2, bad}] = 7 end)
        expect_code("INDEX", function() dl.put_along_dim(a, {3, bad}, 7, 1) end)
      end
      assert.same(before, a:totable())
    end
    -- indices of other integer dtypes too: uint64 past math.maxinteger
    local huge = dl.array({1}, {dtype = "uint64"}):sub(2) -- wraps to 2^64 - 1
    expect_code("INDEX", function() return dl.arange(4):take(huge) end)
  end)

  it("take_along_dim picks one element per row, as argmax gives them", function()
    local scores = dl.array{{0.1, 0.7, 0.2}, {0.5, 0.3, 0.2}}
    local best = scores:argmax{dim = 2, keepdims = true}
    assert.same({{0.7}, {0.5}}, dl.take_along_dim(scores, best, 2):totable())
    -- the other dims broadcast: one index row for both rows
    assert.same({{0.2, 0.1}, {0.2, 0.5}}, dl.take_along_dim(scores, {{3, 1}}, 2):totable())
    expect_code("SHAPE", function() return dl.take_along_dim(scores, {1, 2}, 2) end)
  end)

  it("put_along_dim writes in place; the last of repeated indices wins", function()
    local a = dl.zeros{2, 3}
    assert.equal(a, dl.put_along_dim(a, {{1, 1}, {3, 2}}, {{5, 6}, {7, 8}}, 2))
    assert.same({{6, 0, 0}, {0, 8, 7}}, a:totable())
    -- an index out of range writes nothing at all
    expect_code("INDEX", function() dl.put_along_dim(a, {{1, 9}, {1, 1}}, 0, 2) end)
    assert.same({{6, 0, 0}, {0, 8, 7}}, a:totable())
  end)
end)

describe("nonzero and argwhere", function()
  it("a:nonzero() returns one 1-based index array per dim", function()
    local rows, cols = dl.array{{0, 3}, {4, 0}}:nonzero()
    assert.same({1, 2}, rows:totable())
    assert.same({2, 1}, cols:totable())
    assert.same({2, 4}, dl.nonzero(dl.array{0, 1, 0, 0 / 0}):totable()) -- NaN is nonzero
  end)

  it("a:nonzero() of a sparse 2-D grid gives the rows and columns of its few marks", function()
    local grid = dl.zeros({100, 70}, {dtype = "bool"})
    local marks = {{1, 1}, {2, 64}, {64, 65}, {100, 70}}
    for _, m in ipairs(marks) do grid[m[1]][m[2]] = true end
    local rows, cols = grid:nonzero()
    assert.same({1, 2, 64, 100}, rows:totable())
    assert.same({1, 64, 65, 70}, cols:totable())
    assert.same(marks, dl.argwhere(grid):totable())
  end)

  it("dl.argwhere gives them as rows of a (count, ndim) array", function()
    assert.same({{1, 2}, {2, 1}}, dl.argwhere(dl.array{{0, 3}, {4, 0}}):totable())
    assert.same({0, 1}, dl.argwhere(dl.zeros{3}).shape)
  end)
end)

describe("on a device backend", function()
  local BARE = "qgpu_select_bare"
  if not support.registered(BARE) then
    tb.register_queued{name = BARE, devices = 1, max_delay_us = 20}
  end

  it("without kernels for them raise UNSUPPORTED with the device_put hint", function()
    local a = dl.device_put(dl.array{3, 1, 2}, BARE)
    local e = expect_code("UNSUPPORTED", function() return a:take{1} end)
    assert.truthy(e.hint:find("device_put", 1, true))
    expect_code("UNSUPPORTED", function() return a[dl.array{true, false, true}] end)
    -- the recovery: compute on the host
    assert.same({3, 2}, dl.device_put(a, "cpu")[dl.array{true, false, true}]:totable())
  end)
end)
