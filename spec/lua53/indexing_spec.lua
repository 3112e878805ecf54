-- Lua 5.3 and later: indexing with Lua's integer subtype.
--
-- Elements of integer dtypes come back as Lua integers and those of float
-- dtypes as floats; math.mininteger and math.maxinteger are indices like any
-- other. Lua 5.1, 5.2 and LuaJIT have one number type:
-- spec/indexing_spec.lua holds everything that reads the same on every Lua.
local dl = require "dlbridge"

describe("indexing a 1-D array", function()
  it("reading at math.maxinteger or math.mininteger gives nil, as for a table", function()
    local a = dl.array{10, 20, 30}
    assert.is_nil(a[math.maxinteger])
    assert.is_nil(a[math.mininteger])
  end)

  it("returns Lua integers for integer dtypes and floats for float dtypes", function()
    local ints = dl.array{1, 2, 3}
    local floats = dl.array{1.5, 2.5}
    assert.equal("integer", math.type(ints[1]))
    assert.equal("float", math.type(floats[1]))
  end)

  it("a[i] = v converts v to the array's dtype: an integer for int8", function()
    local a = dl.zeros({3}, {dtype = "int8"})
    a[2] = 5
    assert.equal("integer", math.type(a[2]))
  end)
end)

describe("negative indices on the longest possible dims", function()
  -- An expanded view can have math.maxinteger elements (stride 0): -1 is
  -- still the last one, with no overflow on the way.
  it("count from the end of any extent", function()
    local long = dl.zeros(1):expand{math.maxinteger}
    assert.equal(0, long[-1])
    assert.equal(0, long[math.maxinteger])
    assert.equal(0, long[-math.maxinteger])
    local ints = dl.zeros(1, {dtype = "int32"}):expand{math.maxinteger}
    assert.equal(0, ints[-1])
    assert.equal(0, ints:get(-1))
  end)
end)
