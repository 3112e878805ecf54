-- Lua 5.3 and later: the integer-division and bitwise operators on arrays.
--
-- This file documents:
--   a // b                                    dl.floor_divide(a, b)
--   a & b, a | b, a ~ b, a << b, a >> b, ~a   dl.bitwise_and, bitwise_or, bitwise_xor,
--                                             left_shift, right_shift, bitwise_not
-- Lua 5.1, 5.2 and LuaJIT have no such operators: call the functions there
-- (spec/arithmetic_spec.lua, which holds everything else of arithmetic).
-- Also here: shapes with extents beyond 2^53, which only Lua 5.3 and later
-- read back as numbers.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("size-0 results", function()
  it("have their shape, however large their other extents", function()
    local big = 1000000000000000000                    -- 10^18: its byte strides overflow
    local r = -dl.zeros{0, 4, big} + 1
    assert.same({0, 4, big}, r.shape)
    assert.equal(0, r.size)
  end)
end)

describe("the // operator", function()
  it("floors toward minus infinity", function()
    local a = dl.array{7, -7, 7, -7}
    local b = dl.array{2, 2, -2, -2}
    assert.same({3, -4, -4, 3}, (a // b):totable())
    assert.same({1, 1, -1, -1}, (a % b):totable())
  end)

  it("gives 0 for // 0 on integers (NumPy's result), inf on floats", function()
    assert.same({0, 0}, (dl.array{5, -5} // 0):totable())
    assert.same({0, 0}, (dl.array{5, -5} % 0):totable())
    local f = dl.array{1.0} // 0
    assert.equal(math.huge, f[1])
  end)

  it("wraps the smallest integer // -1 to itself", function()
    local a = dl.array({-128}, {dtype = "int8"})
    assert.same({-128}, (a // -1):totable())
  end)
end)

describe("bitwise operators", function()
  it("work on integers", function()
    local a = dl.array({12, 10}, {dtype = "int32"})
    assert.same({8, 8}, (a & 8):totable())
    assert.same({13, 11}, (a | 1):totable())
    assert.same({6, 0}, (a ~ dl.array{10, 10}):totable())
    assert.same({24, 20}, (a << 1):totable())
    assert.same({3, 2}, (a >> 2):totable())
    assert.same({-13, -11}, (~a):totable())
  end)

  it("wrap shifts of small integers", function()
    assert.same({(0xFFFF << 15) % 65536}, (dl.array({0xFFFF}, {dtype = "uint16"}) << 15):totable())
  end)

  it("shift by the width or more to 0 (or -1 for negative values shifted right)", function()
    local a = dl.array({1, -1}, {dtype = "int8"})
    assert.same({0, 0}, (a << 8):totable())
    assert.same({0, -1}, (a >> 9):totable())
  end)

  it("work on bools as logic", function()
    local t, f = dl.array{true, true}, dl.array{true, false}
    assert.same({true, false}, (t & f):totable())
    assert.same({false, true}, (~f):totable())
  end)

  it("raise DTYPE on floats", function()
    expect_code("DTYPE", function() return dl.array{1.5} & 1 end)
  end)
end)
