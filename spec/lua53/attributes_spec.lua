-- Lua 5.3 and later: attributes that count are Lua integers (math.type).
--
-- Lua 5.1, 5.2 and LuaJIT have one number type; there they are whole
-- numbers (spec/attributes_spec.lua, which holds everything else).
local dl = require "dlbridge"

describe("a.shape", function()
  it("holds Lua integers", function()
    for _, e in ipairs(dl.zeros{2.0, 3}.shape) do
      assert.equal("integer", math.type(e))
    end
  end)
end)

describe("a.ndim and a.size", function()
  it("are Lua integers", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal(24, a.size)
    assert.equal("integer", math.type(a.size))
    assert.equal("integer", math.type(a.ndim))
  end)
end)
