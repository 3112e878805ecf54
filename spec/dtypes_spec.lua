-- Element types (dtypes) and conversions.
--
-- This file documents the 15 dtypes, how Lua values are written into
-- elements and read back, and how a:astype(dtype) converts whole arrays.
--
-- Writing a Lua value into an element (a[i] = v, a:set, a:fill, dl.array with
-- opts.dtype, dl.full) is STRICT: the dtype must hold the value, otherwise
-- the write raises VALUE.
--   * integer dtypes take integers in range, integral floats in range
--     (3.0) and booleans (0/1); never a fraction, NaN or inf;
--   * bool takes true/false and the numbers 0 and 1;
--   * float dtypes take any real number, rounded to nearest even; NaN and
--     inf are kept, but a finite value that would round to inf is VALUE;
--   * a complex value ({re=, im=}) with a nonzero imaginary part only goes
--     into a complex dtype; numbers go into complex dtypes with im = 0.
-- Reading gives Lua integers for integer dtypes (uint64 values above
-- math.maxinteger come back as floats), floats for float dtypes, booleans
-- for bool and {re=, im=} tables for complex dtypes.
--
-- a:astype(dtype) follows NumPy's astype with casting="unsafe":
--   integers wrap modulo 2^bits (300 -> uint8 is 44, -1 -> uint16 is 65535),
--   floats -> integers truncate toward zero (-2.7 -> -2),
--   int -> float and float -> narrower float round to nearest even, and
--   overflow gives inf (1e300 -> float32 is inf, unlike a strict write),
--   complex -> real keeps the real part, x -> bool is x ~= 0,
--   bool -> number is 0 or 1.
-- The exceptions are the casts NumPy leaves undefined: NaN, inf, or a float
-- out of the target's range cast to an integer dtype raise VALUE instead of
-- producing an arbitrary number.
local dl = require "dlbridge"
local support = require "support"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local string_unpack = support.string_unpack -- string.unpack likewise

local code_of = support.code_of

-- Writes v into a one-element array of dtype and reads it back.
local function roundtrip(dtype, v)
  local a = dl.zeros(1, {dtype = dtype})
  a[1] = v
  return a[1]
end

-- The error code of writing v into a one-element array of dtype.
local function write_code(dtype, v)
  return code_of(function() dl.zeros(1, {dtype = dtype})[1] = v end)
end

-- The float32 nearest to x (computed by string.pack, not by dlbridge).
local function f32(x) return (string_unpack("f", string_pack("f", x))) end

-- The elements of dl.array(values, {dtype = from}):astype(to), as a table.
local function cast(values, from, to)
  return dl.array(values, {dtype = from}):astype(to):totable()
end

describe("dl.dtypes()", function()
  it("lists the 15 dtype names", function()
    assert.same({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                 "complex128"}, dl.dtypes())
  end)

  it("gives each dtype its itemsize in bytes", function()
    local sizes = {bool = 1, int8 = 1, int16 = 2, int32 = 4, int64 = 8, uint8 = 1, uint16 = 2,
                   uint32 = 4, uint64 = 8, float16 = 2, bfloat16 = 2, float32 = 4,
                   float64 = 8, complex64 = 8, complex128 = 16}
    for _, name in ipairs(dl.dtypes()) do
      local a = dl.zeros({3}, {dtype = name})
      assert.equal(name, a.dtype)
      assert.equal(sizes[name], a.itemsize, name)
      assert.equal(3 * sizes[name], a.nbytes, name)
    end
  end)

  it("raises DTYPE for an unknown name", function()
    assert.equal("DTYPE", code_of(dl.zeros, 1, {dtype = "float128"}))
    assert.equal("DTYPE", code_of(dl.zeros, 1, {dtype = "Float32"}))
  end)
end)

describe("writing and reading elements", function()
  it("round-trips representative values of every dtype", function()
    local cases = {
      bool = {true, false},
      int8 = {-128, 0, 127}, int16 = {-32768, 32767}, int32 = {-2147483648, 2147483647},
      int64 = {-2 ^ 53, -1, 2 ^ 53}, -- (and the ends of int64: spec/lua53/dtypes_spec.lua)
      uint8 = {0, 255}, uint16 = {0, 65535}, uint32 = {0, 4294967295},
      uint64 = {0, 2 ^ 53},
      float16 = {-2.5, 0.0, 65504.0}, bfloat16 = {-2.5, 1.0, 256.0},
      float32 = {-2.5, 0.5, 16777216.0}, float64 = {-2.5, 0.1, 1e300},
    }
    for dtype, values in pairs(cases) do
      local a = dl.zeros(#values, {dtype = dtype})
      for i, v in ipairs(values) do a[i] = v end
      assert.same(values, a:totable(), dtype)
    end
  end)

  it("reads every number dtype back as a Lua number", function()
    -- (integers or floats by the dtype's kind on Lua 5.3 and later: spec/lua53/dtypes_spec.lua)
    for _, dtype in ipairs{"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float16", "bfloat16", "float32", "float64"} do
      assert.equal(3, roundtrip(dtype, 3), dtype)
    end
  end)

  it("stores int64 exactly, within the +-2^53 that every Lua number holds", function()
    -- (down to math.mininteger and up to math.maxinteger on Lua 5.3 and later: spec/lua53)
    assert.equal(2 ^ 53, roundtrip("int64", 2 ^ 53))
    assert.equal(-2 ^ 53, roundtrip("int64", -2 ^ 53))
    assert.equal(2 ^ 53 - 1, roundtrip("int64", 2 ^ 53 - 1))
  end)

  it("stores uint64 values above 2^63: a:tobytes and tostring show them on every Lua", function()
    -- (read back as the nearest float on Lua 5.3 and later: spec/lua53/dtypes_spec.lua;
    -- Lua 5.1, 5.2 and LuaJIT read no integer beyond 2^53)
    local a = dl.zeros(1, {dtype = "uint64"})
    a[1] = 9223372036854775808.0 -- 2^63, written as a float
    assert.equal("\0\0\0\0\0\0\0\128", a:tobytes())
    -- 2^64 - 1, the largest uint64, built from raw bytes
    local max = dl.frombytes(string.rep("\255", 8), "uint64")
    assert.matches("[18446744073709551615]", tostring(max), 1, true)
  end)

  it("rejects negative values and 2^64 in uint64", function()
    assert.equal("VALUE", write_code("uint64", -1))
    assert.equal("VALUE", write_code("uint64", 2 ^ 64))
  end)

  it("rejects integers one past each end of a dtype's range", function()
    assert.equal("VALUE", write_code("int8", 128))
    assert.equal("VALUE", write_code("int8", -129))
    assert.equal("VALUE", write_code("int16", -32769))
    assert.equal("VALUE", write_code("uint16", 65536))
    assert.equal("VALUE", write_code("uint32", 4294967296))
    assert.equal("VALUE", write_code("int32", 2147483648))
    assert.equal("VALUE", write_code("int64", 2 ^ 63)) -- a float just past math.maxinteger
  end)

  it("rounds float16 to nearest, ties to even", function()
    -- float16 has 10 fraction bits: the spacing just above 1 is 2^-10.
    assert.equal(1.0, roundtrip("float16", 1 + 2 ^ -11))              -- tie: down to even 1
    assert.equal(1 + 2 ^ -9, roundtrip("float16", 1 + 3 * 2 ^ -11))   -- tie: up to even 1 + 2^-9
    assert.equal(1 + 2 ^ -10, roundtrip("float16", 1 + 2 ^ -10 + 2 ^ -13))
    assert.equal(2 ^ -24, roundtrip("float16", 2 ^ -24))              -- smallest subnormal
    assert.equal(0.0, roundtrip("float16", 2 ^ -25))                  -- tie: down to 0
    assert.equal(2 ^ -24, roundtrip("float16", 3 * 2 ^ -26))
  end)

  it("holds float16 values up to 65504 and rejects finite values that round to inf", function()
    assert.equal(65504.0, roundtrip("float16", 65504))
    assert.equal(65504.0, roundtrip("float16", 65519))
    assert.equal("VALUE", write_code("float16", 65520)) -- halfway to 65536: rounds to inf
    assert.equal("VALUE", write_code("float16", -65520))
    assert.equal("VALUE", write_code("float16", 1e10))
  end)

  it("rounds bfloat16 to nearest, ties to even", function()
    -- bfloat16 has 7 fraction bits: the spacing just above 1 is 2^-7.
    assert.equal(1.0, roundtrip("bfloat16", 1 + 2 ^ -8))
    assert.equal(1 + 2 ^ -6, roundtrip("bfloat16", 1 + 3 * 2 ^ -8))
    assert.equal(0.10009765625, roundtrip("bfloat16", 0.1))
  end)

  it("holds bfloat16 values up to (2 - 2^-7) * 2^127 and rejects larger finite values", function()
    local max = (2 - 2 ^ -7) * 2 ^ 127
    assert.equal(max, roundtrip("bfloat16", max))
    assert.equal(max, roundtrip("bfloat16", (2 - 2 ^ -8 - 2 ^ -20) * 2 ^ 127))
    assert.equal("VALUE", write_code("bfloat16", (2 - 2 ^ -8) * 2 ^ 127)) -- rounds to inf
    assert.equal("VALUE", write_code("bfloat16", 1e300))
  end)

  it("rounds float32 to nearest, like C's (float) conversion", function()
    assert.equal(f32(0.1), roundtrip("float32", 0.1))
    assert.are_not.equal(0.1, roundtrip("float32", 0.1))
    assert.equal(16777216.0, roundtrip("float32", 16777217))
    assert.equal(3.4028234663852886e38, roundtrip("float32", 3.4028234663852886e38))
    assert.equal("VALUE", write_code("float32", 1e300))
  end)

  it("keeps NaN and infinities in float dtypes", function()
    for _, dtype in ipairs{"float16", "bfloat16", "float32", "float64"} do
      local nan = roundtrip(dtype, 0 / 0)
      assert.is_true(nan ~= nan, dtype)
      assert.equal(math.huge, roundtrip(dtype, math.huge), dtype)
      assert.equal(-math.huge, roundtrip(dtype, -math.huge), dtype)
    end
  end)

  it("reads complex elements as {re=, im=} tables", function()
    local a = dl.zeros(1, {dtype = "complex128"})
    a[1] = {re = 1.5, im = -2}
    assert.same({re = 1.5, im = -2.0}, a[1])
  end)

  it("writes a number or {re=} into a complex element with im = 0", function()
    assert.same({re = 3.0, im = 0.0}, roundtrip("complex64", 3))
    assert.same({re = 3.0, im = 0.0}, roundtrip("complex128", {re = 3}))
    assert.same({re = 1.0, im = 0.0}, roundtrip("complex128", true))
  end)

  it("rounds complex64 parts to float32", function()
    local v = roundtrip("complex64", {re = 0.1, im = 0.2})
    assert.equal(f32(0.1), v.re)
    assert.equal(f32(0.2), v.im)
    assert.equal("VALUE", write_code("complex64", {re = 1e300, im = 0}))
  end)

  it("stores bool as true/false and accepts the numbers 0 and 1", function()
    assert.equal(true, roundtrip("bool", true))
    assert.equal(false, roundtrip("bool", false))
    assert.equal(true, roundtrip("bool", 1))
    assert.equal(false, roundtrip("bool", 0))
    assert.equal(true, roundtrip("bool", 1.0))
  end)

  it("raises VALUE for values the dtype cannot hold", function()
    assert.equal("VALUE", write_code("uint8", 300))
    assert.equal("VALUE", write_code("uint8", -1))
    assert.equal("VALUE", write_code("int32", 2.5))
    assert.equal("VALUE", write_code("int64", 0 / 0))
    assert.equal("VALUE", write_code("int32", math.huge))
    assert.equal("VALUE", write_code("int32", "3"))
    assert.equal("VALUE", write_code("float64", "3"))
    assert.equal("VALUE", write_code("bool", 2))
    assert.equal("VALUE", write_code("float64", {re = 1, im = 2}))
    assert.equal("VALUE", write_code("int32", {re = 1, im = 2}))
    assert.equal("VALUE", write_code("float32", 1e300))
  end)

  it("accepts booleans as 0/1 and integral floats in integer dtypes", function()
    assert.equal(1, roundtrip("int32", true))
    assert.equal(0, roundtrip("int32", false))
    assert.equal(3, roundtrip("int32", 3.0))
    local smallest = dl.zeros(1, {dtype = "int64"})
    smallest[1] = -2.0 ^ 63 -- math.mininteger (read back on Lua 5.3 and later: spec/lua53)
    assert.equal("\0\0\0\0\0\0\0\128", smallest:tobytes())
  end)

  it("accepts a complex value with a zero imaginary part in a real dtype", function()
    assert.equal(1.0, roundtrip("float64", {re = 1, im = 0}))
    assert.equal(1, roundtrip("int32", {re = 1, im = 0}))
  end)

  it("accepts booleans in float dtypes as 0.0 and 1.0", function()
    assert.equal(1.0, roundtrip("float64", true))
    assert.equal(1.0, roundtrip("float16", true))
  end)
end)

describe("a:astype(dtype)", function()
  it("returns a new array and leaves the original alone", function()
    local a = dl.array{1, 2}
    local b = a:astype("float32")
    assert.equal("float32", b.dtype)
    assert.equal("int64", a.dtype)
    local c = a:astype("int64")
    c[1] = 5
    assert.equal(1, a[1])
  end)

  it("keeps the shape, including 0-d arrays, and makes the result contiguous", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:transpose(1, 2):astype("int32")
    assert.same({3, 2}, t.shape)
    assert.is_true(t:is_contiguous())
    assert.same({{1, 4}, {2, 5}, {3, 6}}, t:totable())
    local s = dl.array(2.9):astype("int32")
    assert.equal(0, s.ndim)
    assert.equal(2, s:get())
  end)

  it("wraps integers modulo 2^bits", function()
    assert.same({44}, cast({300}, "int64", "uint8"))
    assert.same({65535}, cast({-1}, "int64", "uint16"))
    assert.same({-56}, cast({200}, "uint8", "int8"))
    assert.same({127, 0}, cast({-129, 256}, "int64", "int8"))
    assert.same({-1}, dl.frombytes(string.rep("\255", 8), "uint64"):astype("int64"):totable())
    -- 2^64 - 1 (which reads back as a float on Lua 5.3 and later: spec/lua53/dtypes_spec.lua)
    assert.equal(string.rep("\255", 8), dl.array({-1}, {dtype = "int64"}):astype("uint64"):tobytes())
  end)

  it("truncates floats toward zero when converting to integers", function()
    assert.same({-2, 2}, cast({-2.7, 2.7}, "float64", "int32"))
    assert.same({255, 0}, cast({255.9, -0.5}, "float64", "uint8"))
    assert.same({-2}, cast({-2.5}, "float16", "int8"))
    -- math.mininteger (read back on Lua 5.3 and later: spec/lua53/dtypes_spec.lua)
    local smallest = dl.array({-2.0 ^ 63}, {dtype = "float64"}):astype("int64")
    assert.equal("\0\0\0\0\0\0\0\128", smallest:tobytes())
  end)

  it("rounds to nearest even when converting to a narrower float", function()
    assert.same({16777216.0}, cast({16777217}, "int64", "float32"))
    assert.same({1.0}, cast({1 + 2 ^ -11}, "float64", "float16"))
    assert.same({f32(0.1)}, cast({0.1}, "float64", "float32"))
    assert.same({f32(0.1)}, cast({0.1}, "float32", "float64"))
  end)

  it("gives inf when a float overflows the narrower float (a strict write would raise)", function()
    assert.same({math.huge, -math.huge}, cast({1e300, -1e300}, "float64", "float32"))
    assert.same({math.huge}, cast({1e6}, "float64", "float16"))
  end)

  it("keeps NaN and inf between float dtypes", function()
    local t = cast({0 / 0, math.huge}, "float64", "float16")
    assert.is_true(t[1] ~= t[1])
    assert.equal(math.huge, t[2])
  end)

  it("keeps the real part when converting complex to real", function()
    assert.same({1.5}, cast({{re = 1.5, im = 2}}, "complex128", "float64"))
    assert.same({1}, cast({{re = 1.5, im = 2}}, "complex128", "int32"))
  end)

  it("makes real values complex with im = 0", function()
    assert.same({{re = 1.5, im = 0.0}}, cast({1.5}, "float64", "complex64"))
  end)

  it("converts to bool as x ~= 0", function()
    assert.same({false, true, true}, cast({0, 2, -1}, "int64", "bool"))
    assert.same({false, true, true}, cast({0.0, 0.5, 0 / 0}, "float64", "bool"))
    assert.same({true, false}, cast({{re = 0, im = 1}, {re = 0, im = 0}}, "complex128", "bool"))
  end)

  it("converts bool to 0 and 1", function()
    assert.same({1, 0}, cast({true, false}, "bool", "int32"))
    assert.same({1.0, 0.0}, cast({true, false}, "bool", "float32"))
  end)

  it("raises VALUE for NaN, inf or out-of-range floats cast to integers (undefined in NumPy)", function()
    assert.equal("VALUE", code_of(function() dl.array{0 / 0}:astype("int32") end))
    assert.equal("VALUE", code_of(function() dl.array{math.huge}:astype("int64") end))
    local function floats(values) return dl.array(values, {dtype = "float64"}) end
    assert.equal("VALUE", code_of(function() floats{1e10}:astype("int32") end))
    assert.equal("VALUE", code_of(function() floats{256}:astype("uint8") end))
    assert.equal("VALUE", code_of(function() floats{-1}:astype("uint8") end))
    assert.equal("VALUE", code_of(function() dl.array{2 ^ 63}:astype("int64") end))
    assert.equal("VALUE", code_of(function() dl.array{2 ^ 64}:astype("uint64") end))
    assert.equal("VALUE", code_of(function() dl.array{{re = 0 / 0, im = 0}}:astype("int8") end))
  end)

  it("raises DTYPE for an unknown dtype", function()
    assert.equal("DTYPE", code_of(function() dl.array{1}:astype("int33") end))
  end)
end)
