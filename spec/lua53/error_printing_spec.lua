-- Lua 5.3 and later: Lua's own errors name a dlbridge.Error by its type name.
--
-- Lua 5.3 and later name a value in "attempt to ..." errors by its
-- metatable's __name; Lua 5.1, 5.2 and LuaJIT say "table"
-- (spec/error_printing_spec.lua holds everything else).
local support = require "support"
local dl = require "dlbridge"

describe("concatenating an error object", function()
  it("is Lua's own error, naming the type dlbridge.Error", function()
    local err = support.error_of(dl.zeros, -1)
    local ok, message = pcall(function() return "failed: " .. err end)
    assert.is_false(ok)
    assert.matches("attempt to concatenate a dlbridge.Error value", message)
  end)

  it("names it at every depth of the stack, in coroutines", function()
    local err = support.error_of(dl.zeros, -1)
    local function concat_at_frame_end()
      local x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20
      return "a" .. err .. "x"
    end
    for depth = 0, 60 do
      local function nest(k)
        if k == 0 then return pcall(concat_at_frame_end) end
        local ok, message = nest(k - 1) -- not a tail call: every level a frame
        return ok, message
      end
      local ok, message = coroutine.wrap(nest)(depth)
      assert.is_false(ok)
      assert.matches("attempt to concatenate a dlbridge.Error value", message, "depth " .. depth)
    end
  end)
end)
