-- Lua 5.3 and later: math.maxinteger as an extent overflows like any other.
--
-- Lua 5.1, 5.2 and LuaJIT cannot write math.maxinteger: spec/shapes_spec.lua
-- uses 2^62 there, and holds everything else.
local dl = require "dlbridge"
local support = require "support"

local error_code = support.code_of

describe("sizes that overflow", function()
  it("raise SHAPE when the element count overflows int64", function()
    local big = math.tointeger(2^31)
    assert.equal("SHAPE", error_code(function() return dl.zeros{big, big, big} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{math.maxinteger, 2} end))
  end)

  it("raise SHAPE in every constructor", function()
    assert.equal("SHAPE", error_code(function() return dl.ones{math.maxinteger, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.empty{math.maxinteger, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.full({math.maxinteger, 2}, 1) end))
  end)

  it("raise SHAPE in views", function()
    assert.equal("SHAPE", error_code(function() return dl.zeros{3}:view{math.maxinteger, 2} end))
  end)
end)
