-- Lua 5.3 and later: a:totable() gives Lua integers or floats by the dtype.
--
-- Lua 5.1, 5.2 and LuaJIT have one number type: spec/data_spec.lua holds
-- everything that reads the same on every Lua.
local dl = require "dlbridge"

describe("a:totable()", function()
  it("gives nested tables of Lua integers for an integer dtype", function()
    local t = dl.array{{1, 2, 3}, {4, 5, 6}}:totable()
    assert.equal("integer", math.type(t[2][3]))
  end)

  it("gives Lua values of the dtype's kind", function()
    assert.equal("float", math.type(dl.array({1, 2}, {dtype = "float32"}):totable()[1]))
    assert.equal("integer", math.type(dl.array({1, 2}, {dtype = "int8"}):totable()[1]))
  end)
end)
