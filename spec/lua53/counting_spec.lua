-- Lua 5.3 and later: histogram bins counted up to math.maxinteger.
--
-- Lua 5.1, 5.2 and LuaJIT have no math.maxinteger (their numbers hold
-- integers exactly up to 2^53): spec/counting_spec.lua asks for 2^62 bins.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("histogram", function()
  it("raises OUT_OF_MEMORY for more bins than any memory holds, counting them right", function()
    local e = expect_code("OUT_OF_MEMORY", function()
      return dl.histogram({1, 2, 3}, {bins = math.maxinteger})
    end)
    assert.truthy(e.message:find("the 9223372036854775808 edges of 9223372036854775807 bins", 1,
                                 true), e.message)
    expect_code("OUT_OF_MEMORY", function() return dl.histogram({1, 2, 3}, {bins = 1 << 62}) end)
  end)
end)
