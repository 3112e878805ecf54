-- Lua 5.3 and later: size-0 arrays with math.maxinteger as another extent.
--
-- A size-0 array reaches no memory, so its other extents may be as large as
-- an int64 allows; every view of it is size-0 too. Lua 5.1, 5.2 and LuaJIT
-- cannot write math.maxinteger: spec/views_spec.lua uses 2^62 there, and
-- holds everything else.
local dl = require "dlbridge"

describe("views of size-0 arrays", function()
  it("can be indexed, sliced and selected anywhere along their other dims", function()
    local a = dl.zeros{math.maxinteger, 0}
    assert.same({0}, a[-3].shape)
    assert.same({0}, a[math.maxinteger].shape)
    assert.same({0}, a:select(1, -1).shape)
    assert.same({3, 0}, a:slice(1, -3, -1).shape)
    assert.same({2, 0}, a:slice(1, -1, 1, math.mininteger + 2).shape)  -- the last row and the first
    assert.same({0, math.maxinteger}, a:transpose().shape)
    assert.same({}, a[5]:totable())
  end)

  it("copy, export and import like any other array", function()
    local a = dl.zeros{math.maxinteger, 0}
    local v = a[-2]
    assert.same({0}, v:copy().shape)
    assert.same({0}, dl.from_dlpack(v:to_dlpack()).shape)
    assert.same({math.maxinteger, 0}, dl.from_dlpack(a).shape)
  end)
end)
