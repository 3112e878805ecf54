-- Lua 5.3 and later: a proxy whose __len says math.maxinteger.
--
-- Lua 5.1, 5.2 and LuaJIT cannot write math.maxinteger:
-- spec/table_proxies_spec.lua uses 2^62 there, and holds everything else.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

describe("dl.array of a table with __len and __index", function()
  it("refuses a length of math.maxinteger before reading any element", function()
    local reads = 0
    local huge = setmetatable({}, {
      __len = function() return math.maxinteger end,
      __index = function() reads = reads + 1; return 1 end,
    })
    assert.equal("SHAPE", code_of(dl.array, huge))
    assert.equal(1, reads) -- t[1], to learn that it is a number
  end)
end)
