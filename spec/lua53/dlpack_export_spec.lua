-- Lua 5.3 and later: int64 and uint64 round-trip through DLPack to the ends
-- of Lua's integers, math.mininteger and math.maxinteger.
--
-- Lua 5.1, 5.2 and LuaJIT hold integers exactly to +-2^53 only:
-- spec/dlpack_export_spec.lua round-trips every dtype with values they hold.
local dl = require "dlbridge"

local function roundtrip(a, opts)
  return dl.from_dlpack(a:to_dlpack(opts))
end

describe("dtypes on a round trip", function()
  it("int64 and uint64 come back with math.mininteger and math.maxinteger", function()
    local values = {
      int64 = {math.mininteger, math.maxinteger},
      uint64 = {0, math.maxinteger},
    }
    for dtype, v in pairs(values) do
      local a = dl.array(v, {dtype = dtype})
      for _, opts in ipairs{{}, {max_version = {0, 8}}, {copy = true}} do
        local b = roundtrip(a, opts)
        assert.equal(dtype, b.dtype)
        assert.same(v, b:totable(), dtype)
      end
    end
  end)
end)
