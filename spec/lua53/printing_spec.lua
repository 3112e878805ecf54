-- Lua 5.3 and later: string.format('%s', a) and print(a) show tostring(a).
--
-- Lua 5.1's string.format takes strings only for %s (Lua 5.2 and later and
-- LuaJIT call tostring): spec/printing_spec.lua holds everything else.
local dl = require "dlbridge"

describe("tostring(a)", function()
  it("is also what print and string.format('%s') show", function()
    local a = dl.array{1, 2}
    assert.equal("array([1, 2], shape=(2,), dtype=int64, device=cpu:0)", ("%s"):format(a))
  end)

  it("prints integral floats with a trailing dot, 1.0 being a float", function()
    assert.equal("array([1., 2.], shape=(2,), dtype=float64, device=cpu:0)",
      tostring(dl.array{1.0, 2.0}))
  end)
end)
