-- Lua 5.3 and later: dtypes and Lua's integer subtype.
--
-- On Lua 5.3 and later an element of an integer dtype comes back as a Lua
-- integer and one of a float dtype as a Lua float, and int64 holds the whole
-- range of Lua integers, math.mininteger to math.maxinteger. Lua 5.1, 5.2
-- and LuaJIT have one number type, exact to +-2^53: spec/dtypes_spec.lua
-- holds everything that reads the same on every Lua.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

-- Writes v into a one-element array of dtype and reads it back.
local function roundtrip(dtype, v)
  local a = dl.zeros(1, {dtype = dtype})
  a[1] = v
  return a[1]
end

describe("writing and reading elements", function()
  it("round-trips the ends of int64 and uint64 up to math.maxinteger", function()
    local cases = {
      int64 = {math.mininteger, -1, math.maxinteger},
      uint64 = {0, math.maxinteger},
    }
    for dtype, values in pairs(cases) do
      local a = dl.zeros(#values, {dtype = dtype})
      for i, v in ipairs(values) do a[i] = v end
      assert.same(values, a:totable(), dtype)
    end
  end)

  it("reads integer dtypes as Lua integers and float dtypes as Lua floats", function()
    for _, dtype in ipairs{"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"} do
      assert.equal("integer", math.type(roundtrip(dtype, 3)), dtype)
    end
    for _, dtype in ipairs{"float16", "bfloat16", "float32", "float64"} do
      assert.equal("float", math.type(roundtrip(dtype, 3)), dtype)
    end
  end)

  it("stores int64 exactly, down to math.mininteger and up to math.maxinteger", function()
    assert.equal(math.maxinteger, roundtrip("int64", math.maxinteger))
    assert.equal(math.mininteger, roundtrip("int64", math.mininteger))
    assert.equal(math.maxinteger - 1, roundtrip("int64", math.maxinteger - 1))
  end)

  it("reads uint64 values above math.maxinteger back as floats", function()
    local v = roundtrip("uint64", 9223372036854775808.0) -- 2^63, written as a float
    assert.equal("float", math.type(v))
    assert.equal(2 ^ 63, v)
    assert.equal(18446744073709549568.0, roundtrip("uint64", 18446744073709549568.0))
    -- 2^64 - 1, the largest uint64, built from raw bytes
    assert.equal(2 ^ 64, dl.frombytes(string.pack("=I8", -1), "uint64")[1])
  end)

  it("accepts integral floats in integer dtypes, and reads them back as integers", function()
    assert.equal("integer", math.type(roundtrip("int32", 3.0)))
    assert.equal(math.mininteger, roundtrip("int64", -2.0 ^ 63))
  end)
end)

describe("a:astype(dtype)", function()
  it("wraps uint64 to int64 modulo 2^64, and back", function()
    assert.same({-1}, dl.frombytes(string.pack("=I8", -1), "uint64"):astype("int64"):totable())
    -- 2^64 - 1 reads back as a float
    assert.same({2 ^ 64}, dl.array({-1}, {dtype = "int64"}):astype("uint64"):totable())
  end)

  it("truncates -2^63 to math.mininteger", function()
    assert.same({math.mininteger}, dl.array({-2.0 ^ 63}, {dtype = "float64"}):astype("int64"):totable())
  end)

  it("raises VALUE for floats out of an integer dtype's range, 1.0 being a float", function()
    assert.equal("VALUE", code_of(function() dl.array{256.0}:astype("uint8") end))
    assert.equal("VALUE", code_of(function() dl.array{-1.0}:astype("uint8") end))
    assert.equal("VALUE", code_of(function() dl.array{1e10}:astype("int32") end))
  end)
end)
