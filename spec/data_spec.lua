-- Reading, writing and copying the elements of whole arrays.
--
-- This file documents the data methods:
--   a:copy()          a new contiguous array with the same elements
--   a:astype(dtype)   a new array converted to dtype (rules: dtypes_spec.lua)
--   a:fill(v)         sets every element to v; returns a
--   a:copy_from(src)  copies src (an array, nested tables or a scalar) into a,
--                     broadcast to a's shape and converted to a's dtype; returns a
--   a:totable()       nested Lua tables (the scalar itself for a 0-d array)
--   a:tobytes()       the raw elements in row-major order, as a string
-- Views (a:transpose, a:slice, ...) work everywhere: the methods follow the
-- logical (row-major) order of the elements, not their order in memory.
local dl = require "dlbridge"
local support = require "support"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)

local code_of = support.code_of

describe("a:copy()", function()
  it("makes an array with its own memory", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    local c = a:copy()
    c:set(1, 1, 99)
    assert.equal(1, a:get(1, 1))
    assert.equal(99, c:get(1, 1))
    assert.equal(a.dtype, c.dtype)
  end)

  it("makes a contiguous copy of a view", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:transpose(1, 2)
    assert.is_false(t:is_contiguous())
    local c = t:copy()
    assert.is_true(c:is_contiguous())
    assert.same({3, 2}, c.shape)
    assert.same({2, 1}, c.strides)
    assert.same({{1, 4}, {2, 5}, {3, 6}}, c:totable())
  end)

  it("copies a view that starts inside its array, short or long", function()
    local a = dl.arange(10)
    local c = a:slice(1, 4, 7):copy()
    a[4] = 99
    assert.same({3, 4, 5, 6}, c:totable())
    local long = dl.arange(200000, {dtype = "int32"})
    local tail = long:slice(1, 3):copy()
    assert.same({199998}, tail.shape)
    assert.is_true(dl.array_equal(long:slice(1, 3), tail))
  end)

  it("turns a read-only expanded view into a writable array", function()
    local e = dl.array{1, 2, 3}:expand{2, 3}
    assert.is_true(e.readonly)
    local c = e:copy()
    assert.is_false(c.readonly)
    c:set(2, 3, 0)
    assert.same({{1, 2, 3}, {1, 2, 0}}, c:totable())
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros(2)
    a:delete()
    assert.equal("DELETED", code_of(a.copy, a))
  end)
end)

describe("a:astype(dtype)", function()
  it("makes a new array of the requested dtype", function()
    local a = dl.array{1.5, -2.5}
    local b = a:astype("int32")
    assert.equal("int32", b.dtype)
    assert.same({1, -2}, b:totable())
    b[1] = 7
    assert.equal(1.5, a[1])
    assert.equal("float64", a.dtype)
  end)
end)

describe("a:fill(v)", function()
  it("sets every element and returns the array, so calls chain", function()
    local a = dl.zeros{2, 2}
    assert.equal(a, a:fill(3))
    assert.same({{3, 3}, {3, 3}}, a:totable())
    assert.same({5, 5, 5}, dl.empty(3, {dtype = "int8"}):fill(5):totable())
  end)

  it("fills complex and bool arrays", function()
    assert.same({re = 1.0, im = -1.0}, dl.zeros(2, {dtype = "complex128"}):fill{re = 1, im = -1}[2])
    assert.same({true, true}, dl.zeros(2, {dtype = "bool"}):fill(true):totable())
  end)

  it("writes through a view into the array it views", function()
    local a = dl.zeros(6)
    a:slice(1, 1, -1, 2):fill(1)
    assert.same({1, 0, 1, 0, 1, 0}, a:totable())
    local m = dl.zeros{3, 3}
    m:narrow(1, 2, 1):fill(7)
    assert.same({{0, 0, 0}, {7, 7, 7}, {0, 0, 0}}, m:totable())
  end)

  it("raises VALUE for a value the dtype cannot hold", function()
    assert.equal("VALUE", code_of(function() dl.zeros(2, {dtype = "uint8"}):fill(300) end))
    assert.equal("VALUE", code_of(function() dl.zeros(2, {dtype = "int32"}):fill(2.5) end))
    assert.equal("VALUE", code_of(function() dl.zeros(2):fill("x") end))
  end)

  it("raises READ_ONLY on an expanded view", function()
    local e = dl.zeros{1, 3}:expand{4, 3}
    assert.equal("READ_ONLY", code_of(e.fill, e, 1))
  end)
end)

describe("a:copy_from(src)", function()
  it("copies an array of the same shape and returns a", function()
    local a = dl.zeros{2, 3}
    local src = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.equal(a, a:copy_from(src))
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
    assert.equal("float64", a.dtype)
  end)

  it("broadcasts a smaller array, for example a row into every row", function()
    local a = dl.zeros{2, 3}
    a:copy_from(dl.array{1, 2, 3})
    assert.same({{1, 2, 3}, {1, 2, 3}}, a:totable())
  end)

  it("broadcasts a column into every column", function()
    local a = dl.zeros{2, 3}
    a:copy_from(dl.array{{1}, {2}})
    assert.same({{1, 1, 1}, {2, 2, 2}}, a:totable())
  end)

  it("takes nested tables, broadcast like arrays", function()
    local a = dl.zeros({2, 2}, {dtype = "int32"})
    a:copy_from{{1, 2}, {3, 4}}
    assert.same({{1, 2}, {3, 4}}, a:totable())
    a:copy_from{5, 6}
    assert.same({{5, 6}, {5, 6}}, a:totable())
    assert.equal("int32", a.dtype)
  end)

  it("checks table elements strictly against a's dtype (VALUE)", function()
    local a = dl.zeros(1, {dtype = "uint8"})
    assert.equal("VALUE", code_of(a.copy_from, a, {300}))
    local b = dl.zeros(1, {dtype = "int32"})
    assert.equal("VALUE", code_of(b.copy_from, b, {2.5}))
  end)

  it("takes a scalar, like a:fill", function()
    local a = dl.zeros({2, 2}, {dtype = "int32"})
    a:copy_from(9)
    assert.same({{9, 9}, {9, 9}}, a:totable())
  end)

  it("converts an array source to a's dtype with astype's rules", function()
    local a = dl.zeros(3, {dtype = "int32"})
    a:copy_from(dl.array{1.9, -2.5, 3})
    assert.same({1, -2, 3}, a:totable())
    local b = dl.zeros(1, {dtype = "uint8"})
    b:copy_from(dl.array{300}) -- integers wrap, as in NumPy's a[...] = b
    assert.same({44}, b:totable())
    assert.equal("VALUE", code_of(a.copy_from, a, dl.array{0 / 0, 0, 0}))
  end)

  it("handles a source that overlaps a, such as a reversed view of itself", function()
    local a = dl.arange(5)
    a:copy_from(a:slice(1, -1, 1, -1))
    assert.same({4, 3, 2, 1, 0}, a:totable())

    local b = dl.arange(5)
    b:slice(1, -1, 1, -1):copy_from(b)
    assert.same({4, 3, 2, 1, 0}, b:totable())

    local m = dl.array{{1, 2}, {3, 4}}
    m:copy_from(m:transpose(1, 2))
    assert.same({{1, 3}, {2, 4}}, m:totable())
  end)

  it("handles a source shifted within the same memory, in either direction", function()
    local right = dl.arange(6)
    right:narrow(1, 2, 5):copy_from(right:narrow(1, 1, 5))
    assert.same({0, 0, 1, 2, 3, 4}, right:totable())

    local left = dl.arange(6)
    left:narrow(1, 1, 5):copy_from(left:narrow(1, 2, 5))
    assert.same({1, 2, 3, 4, 5, 5}, left:totable())
  end)

  it("writes only the part of a larger array that a views, short or long", function()
    local a = dl.zeros(10, {dtype = "int32"})
    a:slice(1, 4, 7):copy_from(dl.array({1, 2, 3, 4}, {dtype = "int32"}))
    assert.same({0, 0, 0, 1, 2, 3, 4, 0, 0, 0}, a:totable())
    local long = dl.zeros(200000, {dtype = "int32"})
    local src = dl.arange(199996, {dtype = "int32"})
    long:slice(1, 3, 199998):copy_from(src)
    assert.is_true(dl.array_equal(long:slice(1, 3, 199998), src))
    assert.same({0, 0}, long:slice(1, 1, 2):totable())
    assert.same({0, 0}, long:slice(1, 199999):totable())
  end)

  it("raises SHAPE when the source does not broadcast to a's shape", function()
    local a = dl.zeros{2, 3}
    assert.equal("SHAPE", code_of(a.copy_from, a, dl.zeros{3, 2}))
    assert.equal("SHAPE", code_of(a.copy_from, a, dl.zeros{2, 3, 1}))
    assert.equal("SHAPE", code_of(a.copy_from, a, {1, 2}))
  end)

  it("raises READ_ONLY for a read-only destination and DELETED for a deleted source", function()
    local e = dl.zeros{1, 3}:expand{2, 3}
    assert.equal("READ_ONLY", code_of(e.copy_from, e, dl.zeros{2, 3}))
    local a, gone = dl.zeros(2), dl.zeros(2)
    gone:delete()
    assert.equal("DELETED", code_of(a.copy_from, a, gone))
  end)
end)

describe("a:totable()", function()
  it("gives nested tables, one level per dimension", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:totable()
    assert.same({{1, 2, 3}, {4, 5, 6}}, t)
    assert.equal("6", tostring(t[2][3])) -- not "6.0"
  end)

  it("gives Lua values of the dtype's kind", function()
    -- (integers or floats by the dtype on Lua 5.3 and later: spec/lua53/data_spec.lua)
    assert.same({1, 2}, dl.array({1, 2}, {dtype = "float32"}):totable())
    assert.equal("1", tostring(dl.array({1, 2}, {dtype = "int8"}):totable()[1]))
    assert.same({true, false}, dl.array{true, false}:totable())
    assert.same({{re = 1.0, im = 2.0}}, dl.array{{re = 1, im = 2}}:totable())
  end)

  it("gives the scalar itself for a 0-d array", function()
    assert.equal(5, dl.array(5):totable())
    assert.same({re = 1.0, im = 2.0}, dl.array{re = 1, im = 2}:totable())
  end)

  it("gives {} for an array with no elements", function()
    assert.same({}, dl.zeros(0):totable())
    assert.same({}, dl.zeros{0, 2}:totable())
    assert.same({{}, {}}, dl.zeros{2, 0}:totable())
  end)

  it("follows the logical order of a view", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:transpose(1, 2):totable()
    assert.same({{1, 4}, {2, 5}, {3, 6}}, t)
  end)

  it("round-trips through dl.array", function()
    local a = dl.arange(6):reshape{2, 3}
    local b = dl.array(a:totable())
    assert.same(a.shape, b.shape)
    assert.equal(a.dtype, b.dtype)
    assert.same(a:totable(), b:totable())
  end)
end)

describe("a:tobytes()", function()
  it("gives the raw elements as a string, the same bytes as string.pack", function()
    assert.equal(string_pack("=i4i4i4", 1, 2, 3), dl.array({1, 2, 3}, {dtype = "int32"}):tobytes())
    assert.equal(string_pack("=d", 2.5), dl.array(2.5):tobytes())
    assert.equal(string_pack("=ff", 1, 2), dl.array({{re = 1, im = 2}}, {dtype = "complex64"}):tobytes())
  end)

  it("uses one byte 0 or 1 per bool and IEEE bits for float16 and bfloat16", function()
    assert.equal("\1\0", dl.array{true, false}:tobytes())
    assert.equal(string_pack("=I2I2", 0x3C00, 0xC000), dl.array({1, -2}, {dtype = "float16"}):tobytes())
    assert.equal(string_pack("=I2", 0x3F80), dl.array({1}, {dtype = "bfloat16"}):tobytes())
  end)

  it("is row-major even for a transposed or strided view", function()
    local t = dl.array({{1, 2}, {3, 4}}, {dtype = "int16"}):transpose(1, 2)
    assert.equal(string_pack("=i2i2i2i2", 1, 3, 2, 4), t:tobytes())
    local s = dl.arange(6, {dtype = "int32"}):slice(1, 1, -1, 2)
    assert.equal(string_pack("=i4i4i4", 0, 2, 4), s:tobytes())
  end)

  it("gives an empty string for an array with no elements", function()
    assert.equal("", dl.zeros(0):tobytes())
  end)

  it("round-trips through dl.frombytes for every dtype", function()
    for _, dtype in ipairs(dl.dtypes()) do
      local a = dl.ones({2, 3}, {dtype = dtype})
      a:set(2, 3, 0)
      local b = dl.frombytes(a:tobytes(), a.dtype, a.shape)
      assert.equal(dtype, b.dtype)
      assert.same({2, 3}, b.shape)
      assert.same(a:totable(), b:totable(), dtype)
    end
    local f = dl.arange(12, {dtype = "float32"}):reshape{3, 4}
    assert.same(f:totable(), dl.frombytes(f:tobytes(), "float32", {3, 4}):totable())
  end)
end)
