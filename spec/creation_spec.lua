-- Creating arrays.
--
-- This file documents every way to make a new array:
--   dl.array(data, opts)          nested tables, a scalar, or another array (copied)
--   dl.zeros/ones/empty(shape, opts)
--   dl.full(shape, value, opts)
--   dl.arange([start,] stop [, step] [, opts])   half-open, like NumPy
--   dl.linspace(start, stop [, num = 50] [, opts])  inclusive, like NumPy
--   dl.frombytes(s, dtype [, shape] [, opts])   raw row-major bytes; opts {device =}
--
-- `shape` is a table of integers ({2, 3}; {} is a 0-d array) or one integer.
-- `opts` is {dtype = "float32", device = "cpu"}; every option is optional,
-- the default dtype is "float64" and the default device is "cpu" ("cpu:0").
-- Without opts.dtype, dl.array infers the dtype as NumPy does: all integers
-- give int64, any float gives float64, all booleans give bool, booleans mixed
-- with numbers count as 0/1, and any {re=, im=} table gives complex128.
-- Lua 5.1, 5.2 and LuaJIT have one number type: there a number is an
-- integer when it is whole and within +-2^53 (so 3.0 is an integer), a float
-- otherwise. Lua 5.3 and later tell 3 from 3.0: spec/lua53/creation_spec.lua.
-- Pass opts.dtype to get the same array on every Lua.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

describe("dl.array", function()
  it("turns nested tables into an n-dimensional array, row-major", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.same({2, 3}, a.shape)
    assert.equal(2, a.ndim)
    assert.equal(6, a.size)
    assert.equal(3, a:get(1, 3))
    assert.equal(4, a:get(2, 1))
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
  end)

  it("nests as deep as the tables go", function()
    local a = dl.array{{{1, 2}}, {{3, 4}}}
    assert.same({2, 1, 2}, a.shape)
    assert.equal(4, a:get(2, 1, 2))
  end)

  it("infers int64 when every element is an integer", function()
    local a = dl.array{1, 2, 3}
    assert.equal("int64", a.dtype)
    assert.equal("1", tostring(a[1])) -- not "1.0"
  end)

  it("infers float64 as soon as one element is a float", function()
    assert.equal("float64", dl.array{1, 2.5}.dtype)
    assert.equal("float64", dl.array{{1, 2}, {3, 0.5}}.dtype)
    assert.equal("float64", dl.array{2 ^ 60}.dtype) -- a float on every Lua: beyond 2^53
    local a = dl.array{1, 2.5}
    assert.equal(1.0, a[1])
  end)

  it("gives float64 for whole numbers too when opts.dtype says so", function()
    local a = dl.array({1, 2, 3}, {dtype = "float64"})
    assert.equal("float64", a.dtype)
    assert.same({1, 2, 3}, a:totable())
  end)

  it("infers bool when every element is a boolean", function()
    local a = dl.array{true, false, true}
    assert.equal("bool", a.dtype)
    assert.same({true, false, true}, a:totable())
  end)

  it("counts booleans mixed with integers as 0 and 1 in an int64 array", function()
    local a = dl.array{true, 2, false}
    assert.equal("int64", a.dtype)
    assert.same({1, 2, 0}, a:totable())
    assert.equal("int64", dl.array{2, true}.dtype)
  end)

  it("counts booleans mixed with floats as 0.0 and 1.0 in a float64 array", function()
    local a = dl.array{true, 2.5}
    assert.equal("float64", a.dtype)
    assert.same({1.0, 2.5}, a:totable())
  end)

  it("reads {re=, im=} tables as complex128 elements", function()
    local a = dl.array{1, {re = 1, im = 2}}
    assert.equal("complex128", a.dtype)
    assert.same({re = 1.0, im = 0.0}, a[1])
    assert.same({re = 1.0, im = 2.0}, a[2])
  end)

  it("makes a 0-d array from a single number, boolean or complex table", function()
    local i = dl.array(5)
    assert.equal(0, i.ndim)
    assert.same({}, i.shape)
    assert.equal(1, i.size)
    assert.equal("int64", i.dtype)
    assert.equal(5, i:get())
    assert.equal("float64", dl.array(5.5).dtype)
    assert.equal("bool", dl.array(true).dtype)
    local c = dl.array{re = 1, im = 2}
    assert.equal(0, c.ndim)
    assert.equal("complex128", c.dtype)
    assert.same({re = 1.0, im = 2.0}, c:get())
  end)

  it("makes an empty float64 array of shape {0} from {}, like np.array([])", function()
    local a = dl.array{}
    assert.same({0}, a.shape)
    assert.equal(0, a.size)
    assert.equal("float64", a.dtype)
  end)

  it("keeps empty inner tables as a zero-length dimension", function()
    local a = dl.array{{}, {}}
    assert.same({2, 0}, a.shape)
    assert.equal(0, a.size)
  end)

  it("uses opts.dtype instead of inference", function()
    local a = dl.array({1, 2, 3}, {dtype = "float32"})
    assert.equal("float32", a.dtype)
    assert.same({1.0, 2.0, 3.0}, a:totable())
    assert.equal("uint8", dl.array({{1, 2}, {3, 4}}, {dtype = "uint8"}).dtype)
  end)

  it("checks every element against opts.dtype (VALUE when it does not fit)", function()
    assert.equal("VALUE", code_of(dl.array, {1, 300}, {dtype = "uint8"}))
    assert.equal("VALUE", code_of(dl.array, {1, 2.5}, {dtype = "int32"}))
  end)

  it("copies another array: same shape and dtype, separate memory", function()
    local a = dl.array{1, 2, 3}
    local b = dl.array(a)
    assert.equal("int64", b.dtype)
    assert.same({3}, b.shape)
    b[1] = 99
    assert.equal(1, a[1])
    assert.equal(99, b[1])
  end)

  it("copies a view into a new contiguous array", function()
    local a = dl.array{{1, 2}, {3, 4}}
    local t = dl.array(a:transpose(1, 2))
    assert.is_true(t:is_contiguous())
    assert.same({{1, 3}, {2, 4}}, t:totable())
  end)

  it("converts a copied array to opts.dtype", function()
    local b = dl.array(dl.array{1, 2, 3}, {dtype = "float32"})
    assert.equal("float32", b.dtype)
    assert.same({1.0, 2.0, 3.0}, b:totable())
  end)

  it("rejects ragged nested tables with SHAPE", function()
    assert.equal("SHAPE", code_of(dl.array, {{1, 2}, {3}}))
    assert.equal("SHAPE", code_of(dl.array, {{1, 2}, 3}))
    assert.equal("SHAPE", code_of(dl.array, {1, {2}}))
  end)

  it("rejects strings and other values that are not elements with VALUE", function()
    assert.equal("VALUE", code_of(dl.array, {"1"}))
    assert.equal("VALUE", code_of(dl.array, "1"))
    assert.equal("VALUE", code_of(dl.array, {1, print}))
  end)

  it("needs data: dl.array() is an ARGUMENT error", function()
    assert.equal("ARGUMENT", code_of(dl.array))
  end)

  it("accepts the cpu device and rejects unknown devices and options", function()
    assert.equal("cpu:0", dl.array({1}, {device = "cpu"}).device)
    assert.equal("UNKNOWN_DEVICE", code_of(dl.array, {1}, {device = "nope"}))
    assert.equal("ARGUMENT", code_of(dl.array, {1}, {dtpye = "int32"}))
  end)
end)

describe("dl.zeros, dl.ones and dl.empty", function()
  it("take the shape as a table of integers", function()
    local a = dl.zeros{2, 3}
    assert.same({2, 3}, a.shape)
    assert.same({{0, 0, 0}, {0, 0, 0}}, a:totable())
  end)

  it("take a single integer as the shape of a 1-D array", function()
    local a = dl.ones(4)
    assert.same({4}, a.shape)
    assert.same({1, 1, 1, 1}, a:totable())
  end)

  it("make a 0-d array (one element, no dimensions) from the shape {}", function()
    local a = dl.zeros{}
    assert.equal(0, a.ndim)
    assert.equal(1, a.size)
    assert.equal(0.0, a:get())
  end)

  it("allow dimensions of length 0", function()
    assert.equal(0, dl.zeros(0).size)
    local a = dl.zeros{2, 0}
    assert.same({2, 0}, a.shape)
    assert.equal(0, a.size)
  end)

  it("default to float64 on the cpu", function()
    local a = dl.ones{2}
    assert.equal("float64", a.dtype)
    assert.equal(1, a[1])
    assert.equal("cpu:0", a.device)
    assert.equal("cpu", a.backend)
  end)

  it("use opts.dtype", function()
    assert.same({1, 1}, dl.ones(2, {dtype = "int8"}):totable())
    assert.same({true, true}, dl.ones(2, {dtype = "bool"}):totable())
    assert.same({false, false}, dl.zeros(2, {dtype = "bool"}):totable())
    assert.same({re = 1.0, im = 0.0}, dl.ones(2, {dtype = "complex64"})[2])
  end)

  it("dl.empty allocates without setting the elements", function()
    local a = dl.empty({2, 3}, {dtype = "int16"})
    assert.same({2, 3}, a.shape)
    assert.equal("int16", a.dtype)
    assert.equal(12, a.nbytes)
  end)

  it("accept the device names \"cpu\" and \"cpu:0\"", function()
    assert.equal("cpu:0", dl.zeros(2, {device = "cpu"}).device)
    assert.equal("cpu:0", dl.zeros(2, {device = "cpu:0"}).device)
  end)

  it("raise UNKNOWN_DEVICE for a device that does not exist", function()
    assert.equal("UNKNOWN_DEVICE", code_of(dl.zeros, 2, {device = "nope"}))
    assert.equal("UNKNOWN_DEVICE", code_of(dl.ones, 2, {device = "cpu:5"}))
    assert.equal("UNKNOWN_DEVICE", code_of(dl.empty, 2, {device = "nope:0"}))
  end)

  it("raise ARGUMENT for an unknown option key or options that are not a table", function()
    assert.equal("ARGUMENT", code_of(dl.zeros, 2, {dtyp = "int32"}))
    assert.equal("ARGUMENT", code_of(dl.zeros, 2, "int32"))
    -- an unknown key is named first, whatever else is wrong
    assert.equal("ARGUMENT", code_of(dl.zeros, 2, {dtype = "int33", device = 7, dtyp = 1}))
    assert.equal("ARGUMENT", code_of(dl.zeros, 2, {device = 7}))
  end)

  it("raise DTYPE for an unknown dtype name", function()
    assert.equal("DTYPE", code_of(dl.zeros, 2, {dtype = "int33"}))
  end)

  it("raise SHAPE for negative or fractional sizes and for sizes that overflow", function()
    assert.equal("SHAPE", code_of(dl.zeros, {-1}))
    assert.equal("SHAPE", code_of(dl.zeros, -1))
    assert.equal("SHAPE", code_of(dl.ones, {2.5}))
    assert.equal("SHAPE", code_of(dl.empty, {2 ^ 31, 2 ^ 31, 2 ^ 31}))
  end)

  it("raise ARGUMENT for a shape that is not a table or integer", function()
    assert.equal("ARGUMENT", code_of(dl.zeros, "3"))
    assert.equal("ARGUMENT", code_of(dl.zeros, {"3"}))
    assert.equal("ARGUMENT", code_of(dl.zeros))
  end)
end)

describe("dl.full", function()
  it("fills a new array with one value", function()
    assert.same({{7, 7}, {7, 7}}, dl.full({2, 2}, 7):totable())
    assert.same({1.5, 1.5, 1.5}, dl.full(3, 1.5):totable())
    assert.equal(3, dl.full({}, 3):get())
  end)

  it("infers the dtype from the value", function()
    assert.equal("int64", dl.full(2, 7).dtype)
    assert.equal("float64", dl.full(2, 7.5).dtype)
    assert.equal("bool", dl.full(2, true).dtype)
    assert.equal("complex128", dl.full(2, {re = 1, im = 1}).dtype)
  end)

  it("uses opts.dtype when given", function()
    local a = dl.full(2, 7, {dtype = "float32"})
    assert.equal("float32", a.dtype)
    assert.equal(7.0, a[1])
  end)

  it("raises VALUE when the dtype cannot hold the value", function()
    assert.equal("VALUE", code_of(dl.full, 2, 7.5, {dtype = "int32"}))
    assert.equal("VALUE", code_of(dl.full, 2, 256, {dtype = "uint8"}))
    assert.equal("VALUE", code_of(dl.full, 2, "x"))
  end)
end)

describe("dl.arange", function()
  it("counts from 0 up to, but not including, stop", function()
    assert.same({0, 1, 2, 3, 4}, dl.arange(5):totable())
  end)

  it("counts from start up to, but not including, stop", function()
    assert.same({2, 3, 4}, dl.arange(2, 5):totable())
  end)

  it("takes a step, and stops before passing stop", function()
    assert.same({0, 3, 6, 9}, dl.arange(0, 10, 3):totable())
  end)

  it("counts down with a negative step", function()
    assert.same({5, 3, 1}, dl.arange(5, 0, -2):totable())
    assert.same({10, 7, 4, 1}, dl.arange(10, 0, -3):totable())
  end)

  it("is empty when stop cannot be reached", function()
    assert.same({0}, dl.arange(5, 2).shape)
    assert.same({0}, dl.arange(-3).shape)
    assert.same({0}, dl.arange(0, 5, -1).shape)
  end)

  it("gives int64 for integer arguments and float64 when any argument is a float", function()
    assert.equal("int64", dl.arange(5).dtype)
    assert.equal("int64", dl.arange(1, 5, 2).dtype)
    local f = dl.arange(0.5, 3)
    assert.equal("float64", f.dtype)
    assert.same({0.5, 1.5, 2.5}, f:totable())
    assert.equal("float64", dl.arange(3.5).dtype)
    assert.same({0, 1, 2, 3}, dl.arange(3.5):totable())
  end)

  it("takes float steps, each value being start + i * step", function()
    assert.same({0, 0.25, 0.5, 0.75}, dl.arange(0, 1, 0.25):totable())
    assert.same({1, 0.75, 0.5, 0.25}, dl.arange(1.0, 0, -0.25):totable())
    local a = dl.arange(0, 1, 0.1)
    assert.equal(10, a.size)
    assert.equal(9 * 0.1, a[10])
  end)

  it("takes opts after the numbers", function()
    local a = dl.arange(3, {dtype = "float32"})
    assert.equal("float32", a.dtype)
    assert.same({0, 1, 2}, a:totable())
    assert.equal("uint8", dl.arange(1, 4, 1, {dtype = "uint8"}).dtype)
  end)

  it("raises VALUE when a value does not fit opts.dtype", function()
    assert.equal("VALUE", code_of(dl.arange, 250, 260, {dtype = "uint8"}))
  end)

  it("refuses 2^63 elements or more (math.maxinteger on Lua 5.3: spec/lua53)", function()
    assert.same({2 ^ 53 - 1}, dl.arange(2 ^ 53 - 1, 2 ^ 53):totable())
    assert.equal("SHAPE", code_of(dl.arange, 0, -2 ^ 63, -1))   -- 2^63 elements
    assert.equal("SHAPE", code_of(dl.arange, -2 ^ 62, 2 ^ 62))  -- 2^63 elements
  end)

  it("raises ARGUMENT for a step of 0", function()
    assert.equal("ARGUMENT", code_of(dl.arange, 0, 5, 0))
    assert.equal("ARGUMENT", code_of(dl.arange, 0, 5, 0.0))
  end)

  it("raises ARGUMENT for arguments that are not numbers, or too many", function()
    assert.equal("ARGUMENT", code_of(dl.arange, "5"))
    assert.equal("ARGUMENT", code_of(dl.arange, 1, 2, 3, 4))
  end)

  it("raises VALUE for NaN or infinite bounds and SHAPE for a range that overflows", function()
    assert.equal("VALUE", code_of(dl.arange, 0 / 0))
    assert.equal("VALUE", code_of(dl.arange, 0, math.huge))
    assert.equal("SHAPE", code_of(dl.arange, -2 ^ 63, 2 ^ 63))
  end)
end)

describe("dl.linspace", function()
  it("gives num evenly spaced values from start to stop, both included", function()
    assert.same({0, 0.25, 0.5, 0.75, 1}, dl.linspace(0, 1, 5):totable())
  end)

  it("makes 50 values by default", function()
    local a = dl.linspace(0, 49)
    assert.same({50}, a.shape)
    assert.equal(0, a[1])
    assert.equal(1, a[2])
    assert.equal(49, a[50])
  end)

  it("ends exactly at stop", function()
    assert.equal(0.3, dl.linspace(0, 0.3, 4)[4])
  end)

  it("counts down when stop is below start", function()
    assert.same({1, 0.5, 0}, dl.linspace(1, 0, 3):totable())
  end)

  it("gives just start for num = 1 and an empty array for num = 0", function()
    assert.same({2}, dl.linspace(2, 3, 1):totable())
    assert.same({0}, dl.linspace(2, 3, 0).shape)
  end)

  it("gives float64 even for integer arguments, unless opts.dtype says otherwise", function()
    local a = dl.linspace(0, 10, 6)
    assert.equal("float64", a.dtype)
    assert.equal(2, a[2])
    local b = dl.linspace(0, 10, 6, {dtype = "int32"})
    assert.equal("int32", b.dtype)
    assert.same({0, 2, 4, 6, 8, 10}, b:totable())
    assert.equal("float32", dl.linspace(0, 1, {dtype = "float32"}).dtype)
  end)

  it("raises VALUE when a value does not fit opts.dtype", function()
    assert.equal("VALUE", code_of(dl.linspace, 0, 1, 3, {dtype = "int32"}))
  end)

  it("raises SHAPE for a negative or fractional num", function()
    assert.equal("SHAPE", code_of(dl.linspace, 0, 1, -1))
    assert.equal("SHAPE", code_of(dl.linspace, 0, 1, 2.5))
  end)

  it("raises ARGUMENT without both start and stop", function()
    assert.equal("ARGUMENT", code_of(dl.linspace, 0))
  end)
end)

-- The bytes below are little-endian, as the machines dlbridge runs on are
-- (on Lua 5.3 and later string.pack makes them: spec/lua53/creation_spec.lua).
local INT32_1_2_3 = "\1\0\0\0" .. "\2\0\0\0" .. "\3\0\0\0"
local FLOAT64_1_5 = "\0\0\0\0\0\0\248\63" -- 1.5: 0x3FF8000000000000
local FLOAT64_1 = "\0\0\0\0\0\0\240\63"   -- 1.0: 0x3FF0000000000000
local FLOAT64_2 = "\0\0\0\0\0\0\0\64"     -- 2.0: 0x4000000000000000

describe("dl.frombytes", function()
  it("takes opts last: the device the array goes to", function()
    local a = dl.frombytes(INT32_1_2_3, "int32", {3}, {device = "cpu"})
    assert.equal("cpu:0", a.device)
    assert.same({1, 2, 3}, a:totable())
    assert.equal("ARGUMENT", code_of(dl.frombytes, "abcd", "int32", {1}, {devcie = "cpu"}))
    -- the dtype is argument #2; a second one in opts would be ignored, so it is refused
    assert.equal("ARGUMENT", code_of(dl.frombytes, "abcd", "uint8", nil, {dtype = "int16"}))
  end)

  it("reads raw bytes as elements of a dtype", function()
    local a = dl.frombytes(INT32_1_2_3, "int32", {3})
    assert.equal("int32", a.dtype)
    assert.same({1, 2, 3}, a:totable())
  end)

  it("fills the shape in row-major order", function()
    local a = dl.frombytes("\1\0\2\0\3\0\4\0\5\0\6\0", "int16", {2, 3})
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
  end)

  it("makes a 1-D array when the shape is left out", function()
    local a = dl.frombytes(FLOAT64_1_5 .. FLOAT64_2, "float64")
    assert.same({2}, a.shape)
    assert.same({1.5, 2.0}, a:totable())
  end)

  it("takes the shape as one integer, or {} for a 0-d array", function()
    assert.same({2}, dl.frombytes("\1\0\0\0\0\0\0\0\2\0\0\0\0\0\0\0", "int64", 2).shape)
    local s = dl.frombytes("\7\0\0\0\0\0\0\0", "int64", {})
    assert.equal(0, s.ndim)
    assert.equal(7, s:get())
  end)

  it("reads complex elements as (re, im) pairs", function()
    local a = dl.frombytes(FLOAT64_1 .. FLOAT64_2, "complex128")
    assert.same({re = 1.0, im = 2.0}, a[1])
  end)

  it("accepts an empty string for a size-0 shape", function()
    assert.equal(0, dl.frombytes("", "int32", {0}).size)
  end)

  it("raises SHAPE when the byte count does not match the shape and dtype", function()
    assert.equal("SHAPE", code_of(dl.frombytes, "\1\0\0\0\2\0\0\0", "int32", {3}))
    assert.equal("SHAPE", code_of(dl.frombytes, "abc", "int32"))
    assert.equal("SHAPE", code_of(dl.frombytes, "abcdefgh", "int32", {1}))
  end)

  it("raises DTYPE for an unknown dtype and ARGUMENT when s is not a string", function()
    assert.equal("DTYPE", code_of(dl.frombytes, "abcd", "int33"))
    assert.equal("ARGUMENT", code_of(dl.frombytes, 12, "int32"))
  end)
end)
