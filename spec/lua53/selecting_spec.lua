-- Lua 5.3 and later: indices at the ends of Lua's integers.
--
-- math.mininteger, math.mininteger + 1 and math.maxinteger are indices like
-- any other out of range: INDEX, and nothing is written. Lua 5.1, 5.2 and
-- LuaJIT cannot write them (spec/selecting_spec.lua uses -2^63 and 2^62,
-- and holds everything else).
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("take, take_along_dim, put_along_dim and array indices", function()
  it("raise INDEX for any index outside the dim, however far: math.mininteger too", function()
    -- every kind of element (the gathers of 4 and 8 bytes have their own loops)
    for _, dtype in ipairs{"float32", "int64", "float64", "int8", "complex128"} do
      local a = dl.arange(4):astype(dtype)
      local before = a:totable()
      for _, bad in ipairs{math.mininteger, math.mininteger + 1, math.maxinteger, -5, 5} do
        local e = expect_code("INDEX", function() return dl.take(a, {1, bad, 2}) end)
        assert.truthy(e.message:find("index " .. bad .. " is out of range", 1, true), e.message)
        expect_code("INDEX", function() return a[dl.array{2, bad}] end)
        expect_code("INDEX", function() return dl.take_along_dim(a, {3, bad}, 1) end)
        -- writes check every index first: nothing is written
        expect_code("INDEX", function() a[dl.array{2, bad}] = 7 end)
        expect_code("INDEX", function() dl.put_along_dim(a, {3, bad}, 7, 1) end)
      end
      assert.same(before, a:totable())
    end
  end)
end)
