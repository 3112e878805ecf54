-- Lua 5.3 and later: cumulative sums wrap around at math.maxinteger.
--
-- Lua 5.1, 5.2 and LuaJIT cannot write math.maxinteger as a number
-- (spec/scans_spec.lua makes it from bytes, and holds everything else).
local dl = require "dlbridge"

describe("cumsum", function()
  it("wraps integers as NumPy does", function()
    local big = dl.array({math.maxinteger, 1}, {dtype = "int64"})
    assert.equal(math.mininteger, big:cumsum():totable()[2])
  end)
end)
