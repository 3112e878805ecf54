-- Indexing: reading and writing single elements and rows.
--
-- Indices are 1-based, as everywhere in Lua. A negative index counts from
-- the end (-1 is the last element). Index 0 raises an INDEX error (no array
-- has it). Reading a[i] past either end gives nil, as a Lua table does (so
-- ipairs stops there); writing past the end, and a:get / a:set past the end,
-- raise INDEX.
--
--   a[i]                    1-D: the element i.  n-D: a view of row i.
--   a[i] = v                1-D: writes element i.  n-D: writes row i (a
--                           scalar fills it; a table or an array is copied
--                           and broadcast into it).
--   a:get(i, j, ...)        one element; exactly a.ndim indices.
--   a:set(i, j, ..., v)     writes one element; exactly a.ndim indices.
--
-- A 0-d array (shape {}) has no rows: use a:get() and a:set(v).
-- Loop with a numeric for (`for i = 1, #a do ... end`), or with dl.pairs(a)
-- (ipairs(a) and pairs(a) on Lua 5.3 and later): see spec/iteration_spec.lua.
-- Lua 5.3 and later's integers and floats: spec/lua53/indexing_spec.lua.
local dl = require "dlbridge"
local support = require "support"

local error_code = support.code_of

describe("indexing a 1-D array", function()
  it("is 1-based: a[1] is the first element", function()
    local a = dl.array{10, 20, 30}
    assert.equal(10, a[1])
    assert.equal(20, a[2])
    assert.equal(30, a[3])
  end)

  it("a negative index counts from the end: a[-1] is the last element", function()
    local a = dl.array{10, 20, 30}
    assert.equal(30, a[-1])
    assert.equal(20, a[-2])
    assert.equal(10, a[-3])
  end)

  it("index 0 raises INDEX", function()
    local a = dl.array{10, 20, 30}
    local ok, err = pcall(function() return a[0] end)
    assert.is_false(ok)
    assert.equal("INDEX", err.code)
  end)

  it("reading past either end gives nil, as for a table; writing there raises INDEX", function()
    local a = dl.array{10, 20, 30}
    assert.is_nil(a[4])
    assert.is_nil(a[-4])
    assert.is_nil(a[2 ^ 62])
    assert.is_nil(a[-2 ^ 63])
    assert.equal("INDEX", error_code(function() a[4] = 1 end))
    assert.equal("INDEX", error_code(function() a[-4] = 1 end))
  end)

  it("a:get past either end raises INDEX (a:get is the strict read)", function()
    local a = dl.array{10, 20, 30}
    assert.equal("INDEX", error_code(a.get, a, 4))
    assert.equal("INDEX", error_code(a.get, a, -4))
  end)

  it("returns Lua numbers for number dtypes and booleans for bool", function()
    local ints = dl.array{1, 2, 3}
    local floats = dl.array{1.5, 2.5}
    assert.equal(1, ints[1])
    assert.equal("1", tostring(ints[1])) -- not "1.0": an integer where Lua has them
    assert.equal(1.5, floats[1])
    assert.equal(true, dl.array{true, false}[1])
    assert.equal(false, dl.array{true, false}[2])
  end)

  it("a[i] = v writes element i, negative indices included", function()
    local a = dl.zeros{3}
    a[1] = 1.5
    a[-1] = 7
    assert.same({1.5, 0, 7}, a:totable())
  end)

  it("a[i] = v converts v to the array's dtype", function()
    local a = dl.zeros({3}, {dtype = "int8"})
    a[2] = 5
    assert.equal(5, a[2])
    assert.equal("5", tostring(a[2]))
  end)

  it("writing at index 0 or past the end raises INDEX", function()
    local a = dl.zeros{3}
    assert.equal("INDEX", error_code(function() a[0] = 1 end))
    assert.equal("INDEX", error_code(function() a[4] = 1 end))
    assert.equal("INDEX", error_code(function() a[-4] = 1 end))
    assert.same({0, 0, 0}, a:totable())
  end)

  it("writing a value that is not an element (a string) raises VALUE", function()
    local a = dl.zeros{3}
    assert.equal("VALUE", error_code(function() a[1] = "x" end))
  end)
end)

describe("index values", function()
  it("a float with an integer value works as an index: a[3.0] is a[3]", function()
    local a = dl.array{10, 20, 30}
    assert.equal(30, a[3.0])
    assert.equal(30, a[-1.0])
    a[2.0] = 99
    assert.equal(99, a[2])
  end)

  it("a float with a fraction raises INDEX", function()
    local a = dl.array{10, 20, 30}
    assert.equal("INDEX", error_code(function() return a[1.5] end))
    assert.equal("INDEX", error_code(function() a[1.5] = 0 end))
    assert.equal("INDEX", error_code(function() return a[math.huge] end))
    assert.equal("INDEX", error_code(function() return a[0 / 0] end))
  end)

  it("a string key reads a method or attribute, and unknown names read nil", function()
    local a = dl.array{10, 20, 30}
    assert.is_function(a.get)
    assert.equal(1, a.ndim)
    assert.is_nil(a["x"])
    assert.is_nil(a.no_such_name)
    -- a numeric string is a name, not an index
    assert.is_nil(a["1"])
  end)

  it("a key that is neither a number nor a string raises ARGUMENT", function()
    local a = dl.array{10, 20, 30}
    assert.equal("ARGUMENT", error_code(function() return a[true] end))
    assert.equal("ARGUMENT", error_code(function() return a[{}] end))
    assert.equal("ARGUMENT", error_code(function() a[true] = 1 end))
  end)

  it("arrays have no assignable fields: a.foo = 1 raises ARGUMENT", function()
    local a = dl.array{10, 20, 30}
    local ok, err = pcall(function() a.foo = 1 end)
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.is_nil(a.foo)
  end)
end)

describe("indexing an n-D array", function()
  it("a[i] is a view of row i", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    local row = m[2]
    assert.is_true(dl.is_array(row))
    assert.same({3}, row.shape)
    assert.same({4, 5, 6}, row:totable())
    assert.same({1, 2, 3}, m[-2]:totable())
  end)

  it("chained indexing reaches an element: m[i][j]", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.equal(6, m[2][3])
    assert.equal(4, m[-1][1])
  end)

  it("a row of a 3-D array is a 2-D view", function()
    local t = dl.arange(24):view{2, 3, 4}
    assert.same({3, 4}, t[2].shape)
    assert.equal(12, t[2][1][1])
  end)

  it("writes through a row view are seen in the base array", function()
    local m = dl.zeros{2, 3}
    local row = m[2]
    row[3] = 9
    m[1][1] = 4
    assert.same({{4, 0, 0}, {0, 0, 9}}, m:totable())
  end)

  it("a row view sees later writes to the base", function()
    local m = dl.zeros{2, 3}
    local row = m[1]
    m:set(1, 2, 5)
    assert.equal(5, row[2])
  end)

  it("a[i] = scalar fills row i", function()
    local m = dl.zeros{2, 3}
    m[2] = 7
    assert.same({{0, 0, 0}, {7, 7, 7}}, m:totable())
  end)

  it("a[i] = {...} copies a table into row i", function()
    local m = dl.zeros{2, 3}
    m[1] = {1, 2, 3}
    m[-1] = {4, 5, 6}
    assert.same({{1, 2, 3}, {4, 5, 6}}, m:totable())
  end)

  it("a[i] = array copies (and casts) an array into row i", function()
    local m = dl.zeros{2, 3}
    m[2] = dl.array{7, 8, 9}
    assert.same({{0, 0, 0}, {7, 8, 9}}, m:totable())
    assert.equal("float64", m.dtype)
  end)

  it("a[i] = value broadcasts the value to the row's shape", function()
    local m = dl.zeros{2, 2, 3}
    m[1] = {1, 2, 3}          -- each of the 2 rows of m[1] gets {1, 2, 3}
    m[2] = dl.array{{5}, {6}} -- shape {2, 1} spreads along the last dim
    assert.same({{{1, 2, 3}, {1, 2, 3}}, {{5, 5, 5}, {6, 6, 6}}}, m:totable())
  end)

  it("a value that does not broadcast to the row raises SHAPE and writes nothing", function()
    local m = dl.zeros{2, 3}
    assert.equal("SHAPE", error_code(function() m[1] = {1, 2} end))
    assert.equal("SHAPE", error_code(function() m[1] = dl.array{1, 2, 3, 4} end))
    assert.same({{0, 0, 0}, {0, 0, 0}}, m:totable())
  end)

  it("row index 0 raises INDEX; past either end a read is nil and a write raises INDEX", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m[0] end))
    assert.is_nil(m[3])
    assert.is_nil(m[-3])
    assert.equal("INDEX", error_code(function() m[3] = 1 end))
    assert.equal("INDEX", error_code(function() m[0] = 1 end))
  end)
end)

describe("a:get and a:set", function()
  it("a:get(i, j, ...) takes one index per dimension", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.equal(2, m:get(1, 2))
    assert.equal(6, m:get(-1, -1))
    assert.equal(4, m:get(2.0, 1))
  end)

  it("a:set(i, j, ..., v) writes one element", function()
    local m = dl.zeros{2, 3}
    m:set(2, 3, 9)
    m:set(-2, 1, 1.5)
    assert.same({{1.5, 0, 0}, {0, 0, 9}}, m:totable())
  end)

  it("works on 1-D arrays with a single index", function()
    local a = dl.array{10, 20, 30}
    a:set(-1, 33)
    assert.equal(33, a:get(3))
  end)

  it("follows the strides of views", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:transpose()
    assert.equal(4, t:get(1, 2))
    t:set(3, 1, 30)
    assert.equal(30, t:get(3, 1))
  end)

  it("needs exactly ndim indices, else INDEX", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m:get(1) end))
    assert.equal("INDEX", error_code(function() return m:get(1, 1, 1) end))
    assert.equal("INDEX", error_code(function() return m:get() end))
    assert.equal("INDEX", error_code(function() m:set(1, 5) end))
    assert.equal("INDEX", error_code(function() m:set(1, 1, 1, 5) end))
  end)

  it("an index 0, out of range or with a fraction raises INDEX", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m:get(0, 1) end))
    assert.equal("INDEX", error_code(function() return m:get(1, 4) end))
    assert.equal("INDEX", error_code(function() return m:get(1, 1.5) end))
    assert.equal("INDEX", error_code(function() m:set(3, 1, 5) end))
  end)

  it("a non-number index raises ARGUMENT", function()
    local m = dl.zeros{2, 3}
    assert.equal("ARGUMENT", error_code(function() return m:get(1, "2") end))
  end)

  it("a:set without a value raises ARGUMENT", function()
    local a = dl.zeros{3}
    assert.equal("ARGUMENT", error_code(function() a:set() end))
  end)
end)

describe("a 0-d array", function()
  it("is read with a:get() and written with a:set(v)", function()
    local z = dl.array(5)
    assert.equal(0, z.ndim)
    assert.equal(5, z:get())
    z:set(7)
    assert.equal(7, z:get())
  end)

  it("cannot be indexed: a[1] raises INDEX", function()
    local z = dl.array(5)
    assert.equal("INDEX", error_code(function() return z[1] end))
    assert.equal("INDEX", error_code(function() z[1] = 0 end))
    assert.equal("INDEX", error_code(function() return z:get(1) end))
  end)

  it("is what selecting the last dimension of a 1-D array gives", function()
    local a = dl.array{10, 20, 30}
    local z = a:select(1, 2)
    assert.equal(0, z.ndim)
    z:set(21)
    assert.equal(21, a[2])
  end)
end)

describe("writing to a read-only array", function()
  it("raises READ_ONLY for a[i] = v, a:set and row writes", function()
    local e = dl.zeros{1}:expand{3}
    assert.equal("READ_ONLY", error_code(function() e[1] = 5 end))
    assert.equal("READ_ONLY", error_code(function() e:set(2, 5) end))
    local m = dl.zeros{1, 3}:expand{2, 3}
    assert.equal("READ_ONLY", error_code(function() m[1] = 5 end))
    assert.equal("READ_ONLY", error_code(function() m[1][1] = 5 end))
    assert.same({0, 0, 0}, e:totable())
  end)
end)

describe("looping over an array", function()
  it("use a numeric for from 1 to #a", function()
    local a = dl.array{10, 20, 30}
    local sum = 0
    for i = 1, #a do sum = sum + a[i] end
    assert.equal(60, sum)
  end)

  it("a numeric for over an n-D array visits its rows", function()
    local m = dl.array{{1, 2}, {3, 4}, {5, 6}}
    local firsts = {}
    for i = 1, #m do firsts[i] = m[i][1] end
    assert.same({1, 3, 5}, firsts)
  end)

  it("dl.pairs works too, and stops at a[#a + 1], which is nil (more in iteration_spec.lua)",
    function()
      local a = dl.array{10, 20, 30}
      local seen = {}
      for i, v in dl.pairs(a) do seen[i] = v end
      assert.same({10, 20, 30}, seen)
      assert.is_nil(a[#a + 1])
    end)
end)

describe("negative indices on the longest possible dims", function()
  -- An expanded view can have 2^62 elements, or math.maxinteger on Lua 5.3
  -- and later (spec/lua53/indexing_spec.lua) (stride 0): -1 is still the
  -- last one, with no overflow on the way.
  it("count from the end of any extent", function()
    local long = dl.zeros(1):expand{2 ^ 62}
    assert.equal(0, long[-1])
    assert.equal(0, long[2 ^ 62])
    assert.equal(0, long[-2 ^ 62])
    local ints = dl.zeros(1, {dtype = "int32"}):expand{2 ^ 62}
    assert.equal(0, ints[-1])
    assert.equal(0, ints:get(-1))
  end)
end)
