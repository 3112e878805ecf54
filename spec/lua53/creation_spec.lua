-- Lua 5.3 and later: creating arrays where integers and floats are two kinds
-- of number, with the full int64 range, and bytes from string.pack.
--
-- On Lua 5.3 and later 3 is an integer and 3.0 a float, so dl.array{3.0}
-- is float64 and dl.array{3} int64; math.mininteger and math.maxinteger are
-- the ends of the int64 range. Lua 5.1, 5.2 and LuaJIT have one number type
-- (a whole number within +-2^53 is an integer there): spec/creation_spec.lua
-- holds everything that reads the same on every Lua.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

describe("dl.array", function()
  it("infers int64 when every element is an integer: elements come back as integers", function()
    local a = dl.array{1, 2, 3}
    assert.equal("int64", a.dtype)
    assert.equal("integer", math.type(a[1]))
  end)

  it("infers float64 as soon as one element is a float (1.0 counts as a float)", function()
    assert.equal("float64", dl.array{1, 2, 3.0}.dtype)
    local a = dl.array{1, 2.5}
    assert.equal(1.0, a[1])
    assert.equal("float", math.type(a[1]))
  end)
end)

describe("dl.zeros, dl.ones and dl.empty", function()
  it("default to float64: elements come back as floats", function()
    local a = dl.ones{2}
    assert.equal("float64", a.dtype)
    assert.equal("float", math.type(a[1]))
  end)
end)

describe("dl.full", function()
  it("infers float64 from a float value, even a whole one", function()
    assert.equal("float64", dl.full(2, 7.0).dtype)
    assert.equal("int64", dl.full(2, 7).dtype)
  end)
end)

describe("dl.arange", function()
  it("gives float64 when any argument is a float, even a whole one", function()
    local f = dl.arange(0.0, 3)
    assert.equal("float64", f.dtype)
    assert.same({0.0, 1.0, 2.0}, f:totable())
  end)

  it("works over the whole int64 range, and refuses more than math.maxinteger elements", function()
    assert.same({0}, dl.arange(0, math.mininteger, math.mininteger):totable())
    assert.same({math.maxinteger - 1}, dl.arange(math.maxinteger - 1, math.maxinteger):totable())
    assert.same({-1, math.mininteger + 1},
                dl.arange(-1, math.mininteger, math.mininteger + 2):totable())
    assert.equal("SHAPE", code_of(dl.arange, 0, math.mininteger, -1))  -- 2^63 elements
    assert.equal("SHAPE", code_of(dl.arange, -1, math.maxinteger))     -- 2^63 elements
    assert.equal("SHAPE", code_of(dl.arange, math.mininteger, math.maxinteger))
  end)
end)

describe("dl.linspace", function()
  it("gives float64 even for integer arguments: elements come back as floats", function()
    local a = dl.linspace(0, 10, 6)
    assert.equal("float64", a.dtype)
    assert.equal("float", math.type(a[2]))
  end)
end)

describe("dl.frombytes", function()
  it("reads raw bytes from string.pack as elements of a dtype", function()
    local a = dl.frombytes(string.pack("=i4i4i4", 1, 2, 3), "int32", {3}, {device = "cpu"})
    assert.equal("cpu:0", a.device)
    assert.equal("int32", a.dtype)
    assert.same({1, 2, 3}, a:totable())
    a = dl.frombytes(string.pack("=i2i2i2i2i2i2", 1, 2, 3, 4, 5, 6), "int16", {2, 3})
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
    a = dl.frombytes(string.pack("=dd", 1.5, 2), "float64")
    assert.same({2}, a.shape)
    assert.same({1.5, 2.0}, a:totable())
    assert.same({2}, dl.frombytes(string.pack("=i8i8", 1, 2), "int64", 2).shape)
    local s = dl.frombytes(string.pack("=i8", 7), "int64", {})
    assert.equal(0, s.ndim)
    assert.equal(7, s:get())
    a = dl.frombytes(string.pack("=dd", 1, 2), "complex128")
    assert.same({re = 1.0, im = 2.0}, a[1])
    assert.equal("SHAPE", code_of(dl.frombytes, string.pack("=i4i4", 1, 2), "int32", {3}))
  end)
end)
