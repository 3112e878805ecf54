-- Lua 5.3 and later: walking dl.E with pairs.
--
-- dl.E is read-only: a stand-in userdata whose __pairs walks the codes.
-- Lua 5.1 and LuaJIT ignore __pairs (pairs takes tables only): there
-- dl.pairs(dl.E) walks them (spec/errors_spec.lua holds everything else).
local dl = require "dlbridge"

describe("dl.E", function()
  local codes = {
    "BACKEND_INCOMPATIBLE", "DELETED", "CAPSULE_CONSUMED", "UNKNOWN_DEVICE",
    "DEVICE_UNAVAILABLE", "DTYPE", "SHAPE", "INDEX", "VALUE", "COPY_REQUIRED",
    "READ_ONLY", "DLPACK_VERSION", "DLPACK_INVALID", "UNSUPPORTED", "OUT_OF_MEMORY",
    "BACKEND_FAILURE", "ARGUMENT", "IO", "FORMAT", "INTERRUPTED", "LINALG",
  }

  it("holds exactly these 21 codes", function()
    local n = 0
    for name, value in pairs(dl.E) do
      n = n + 1
      assert.equal(name, value)
    end
    assert.equal(#codes, n)
    assert.is_nil(dl.E.OK)
  end)
end)
