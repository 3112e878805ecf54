-- Lua 5.3 and later: reductions give Lua integers or floats, by the result's
-- dtype, and integer sums wrap around at math.maxinteger.
--
-- Lua 5.1, 5.2 and LuaJIT have one number type: spec/reductions_spec.lua
-- holds everything that reads the same on every Lua.
local dl = require "dlbridge"

describe("reducing every dim", function()
  it("gives integers for integer results and floats for float ones", function()
    local i = dl.array({1, 2, 3}, {dtype = "int32"})
    assert.equal("integer", math.type(i:sum()))
    assert.equal("integer", math.type(i:max()))
    assert.equal("float", math.type(i:mean()))
    assert.equal("float", math.type(dl.array{1.5}:sum()))
  end)

  it("of an empty array is the identity, however large its other extents", function()
    local empty = dl.zeros{0, math.maxinteger}
    assert.equal(0, empty:sum())
    assert.equal(1, empty:prod())
    assert.equal(0, empty:count_nonzero())
  end)

  it("wrap integer sums around, as NumPy", function()
    assert.equal(math.mininteger, dl.array{math.maxinteger, 1}:sum())
  end)
end)
