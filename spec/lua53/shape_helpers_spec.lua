-- Lua 5.3 and later: tile and pad by math.maxinteger overflow like any other size.
--
-- Lua 5.1, 5.2 and LuaJIT cannot write math.maxinteger:
-- spec/shape_helpers_spec.lua uses 2^62 there, and holds everything else.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("dl.tile", function()
  it("raises SHAPE when the size overflows", function()
    expect_code("SHAPE", function() return dl.tile(dl.arange(3), {math.maxinteger, 2}) end)
  end)
end)

describe("dl.pad", function()
  it("raises SHAPE for a width that overflows", function()
    local row = dl.array{1, 2, 3}
    expect_code("SHAPE", function() return dl.pad(row, math.maxinteger) end)
  end)
end)
