-- Lua 5.3 and later: misuse with the ends of Lua's integers.
--
-- math.mininteger and math.maxinteger as shapes, ranges, indices and
-- dimensions raise the same codes as any other number out of range: never
-- wrapped around. Lua 5.1, 5.2 and LuaJIT have no such integers:
-- spec/misuse_spec.lua uses -2^63 and 2^62 there, and holds everything else.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("shapes at the ends of the integers", function()
  it("math.mininteger cannot be a size (SHAPE)", function()
    expect_code("SHAPE", dl.zeros, math.mininteger)
  end)

  it("cannot overflow the element count or the address space (SHAPE)", function()
    expect_code("SHAPE", dl.zeros, {1 << 62, 1 << 62})
    expect_code("SHAPE", dl.zeros, math.maxinteger)
    expect_code("SHAPE", dl.zeros, {1 << 61}) -- 2^61 float64 = 2^64 bytes
  end)

  it("sizes written as integers that no memory holds are OUT_OF_MEMORY", function()
    expect_code("OUT_OF_MEMORY", dl.zeros, {1 << 47}) -- 2^50 bytes
    local huge = dl.zeros(1):expand{1 << 40} -- 8 TiB as bytes
    expect_code("OUT_OF_MEMORY", huge.tobytes, huge)
  end)

  it("integer values out of range are VALUE", function()
    expect_code("VALUE", dl.full, 2, 1 << 31, {dtype = "int32"})
  end)

  it("arange rejects ranges with too many elements (SHAPE)", function()
    expect_code("SHAPE", dl.arange, math.mininteger, math.maxinteger)
  end)

  it("linspace rejects a count beyond memory (SHAPE)", function()
    expect_code("SHAPE", dl.linspace, 0, 1, 1 << 60)
  end)
end)

describe("indices at the ends of the integers", function()
  local v = dl.arange(3)
  local m = dl.zeros{2, 3}

  it("math.mininteger and math.maxinteger are out of range, not wrapped around", function()
    assert.is_nil(v[math.mininteger])
    assert.is_nil(v[math.maxinteger])
    expect_code("INDEX", function() v[math.mininteger] = 0 end)
    expect_code("INDEX", function() v[math.maxinteger] = 0 end)
    expect_code("INDEX", m.set, m, math.mininteger, 1, 0)
  end)

  it("a dimension of math.mininteger is INDEX", function()
    expect_code("INDEX", m.transpose, m, math.mininteger, 1)
  end)

  it("narrow by math.maxinteger or from math.mininteger is INDEX", function()
    expect_code("INDEX", v.narrow, v, 1, 1, math.maxinteger)
    expect_code("INDEX", v.narrow, v, 1, math.mininteger, 1)
  end)
end)
