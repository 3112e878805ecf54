-- Element-wise arithmetic: operators, functions, broadcasting, dtypes.
--
-- This file documents:
--   a + b, a - b, a * b, a / b, a % b, a ^ b, -a              (arrays and Lua numbers, either side)
--   a // b, a & b, a | b, a ~ b, a << b, a >> b, ~a           (Lua 5.3 and later: the operators
--                                                              of spec/lua53/arithmetic_spec.lua)
--   dl.add(a, b, opts)   also dl.sub, dl.mul, dl.div, dl.floor_divide, dl.mod, dl.pow, dl.neg,
--                        dl.maximum, dl.minimum, dl.bitwise_and/or/xor/not, dl.left_shift,
--                        dl.right_shift; each is also a method: a:add(b, opts)
--   opts = {out = c}     writes the result into c (which may be a or b: in place)
-- The NumPy names subtract, multiply, divide, power, negative, invert are aliases.
-- Results are laid out in the memory order of the array operands (NumPy's
-- order 'K'): m:T() + 1 is column-major like m:T(), so it is computed in one
-- pass over memory; :copy() gives a row-major array. Broadcasting follows NumPy. Lua numbers are "weak" scalars (NumPy 2, NEP 50):
-- they never widen an array's dtype, and must fit it.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("arithmetic operators", function()
  it("work between an array and a Lua number, on either side", function()
    local a = dl.array{1, 2, 3}
    assert.same({2, 3, 4}, (a + 1):totable())
    assert.same({9, 8, 7}, (10 - a):totable())
    assert.same({2, 4, 6}, (2 * a):totable())
    assert.same({0.5, 1.0, 1.5}, (a / 2):totable())
    assert.same({-1, -2, -3}, (-a):totable())
  end)

  it("work between two arrays of one shape", function()
    local a, b = dl.array{1, 2, 3}, dl.array{10, 20, 30}
    assert.same({11, 22, 33}, (a + b):totable())
    assert.same({10, 40, 90}, (a * b):totable())
    assert.same({1, 4, 27}, (a ^ a):totable())
  end)

  it("broadcast shapes as NumPy does", function()
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}      -- 2x3
    local row = dl.array{10, 20, 30}              -- 3   -> each row
    local col = dl.array{{100}, {200}}            -- 2x1 -> each column
    assert.same({{11, 22, 33}, {14, 25, 36}}, (m + row):totable())
    assert.same({{101, 102, 103}, {204, 205, 206}}, (m + col):totable())
    assert.same({2, 3}, (col + row).shape)
  end)

  it("raise SHAPE for shapes that do not broadcast", function()
    local err = expect_code("SHAPE", function() return dl.zeros{2, 3} + dl.zeros{4} end)
    assert.matches("broadcast", err.message)
  end)

  it("give size-0 results for size-0 operands, whatever their other extents", function()
    local big = 1000000000000000000                    -- 10^18: its byte strides overflow
    local e = dl.zeros{0, 4, big}                      -- reaches no memory
    local r = -e + 1
    -- (r.shape holds 10^18, beyond the 2^53 of Lua 5.1, 5.2 and LuaJIT's numbers: tostring
    -- shows it on every Lua; r.shape itself on Lua 5.3 and later: spec/lua53/arithmetic_spec.lua)
    assert.matches("shape=(0, 4, 1000000000000000000)", tostring(r), 1, true)
    assert.equal(3, r.ndim)
    assert.equal(0, r.size)
  end)

  it("accept nested tables as arrays", function()
    assert.same({11, 22}, (dl.array{1, 2} + {10, 20}):totable())
  end)

  it("follow the layout of views (transposed, reversed) without copying them first", function()
    local m = dl.array{{1, 2}, {3, 4}}
    assert.same({{2, 6}, {4, 8}}, (m:transpose() * 2):totable())
  end)

  it("lay the result out as the operands lie in memory (NumPy's order 'K')", function()
    local m = dl.arange(6):reshape{2, 3}
    local t = m:T() + 1 -- m:T() steps {1, 3} elements: so does the result
    assert.same({{1, 4}, {2, 5}, {3, 6}}, t:totable())
    assert.same({1, 3}, t.strides)
    assert.is_false(t:is_contiguous())
    assert.same({1, 3}, dl.sqrt(m:T()).strides) -- every element-wise function
    assert.same({2, 1}, t:copy().strides)          -- a row-major copy
  end)

  it("are row-major when the operands disagree, or are reversed views", function()
    local m = dl.arange(6):reshape{2, 3}
    assert.same({2, 1}, (m:T() + dl.ones{3, 2}).strides)
    assert.same({3, 1}, (m:slice(1, nil, nil, -1) * 2).strides)
  end)
end)

describe("result dtypes (NEP 50: Lua numbers are weak)", function()
  it("keep the array's dtype for Lua integers", function()
    assert.equal("uint8", (dl.zeros({3}, {dtype = "uint8"}) * 2).dtype)
    assert.equal("int16", (dl.zeros({3}, {dtype = "int16"}) + 1).dtype)
    assert.equal("float32", (dl.zeros({3}, {dtype = "float32"}) + 1).dtype)
  end)

  it("keep a float array's dtype for Lua floats, and make integer arrays float64", function()
    assert.equal("float32", (dl.zeros({3}, {dtype = "float32"}) * 0.5).dtype)
    assert.equal("float16", (dl.zeros({3}, {dtype = "float16"}) * 0.5).dtype)
    assert.equal("float64", (dl.zeros({3}, {dtype = "int32"}) * 0.5).dtype)
  end)

  it("make true division of integers float64", function()
    local q = dl.array({1, 2, 3}, {dtype = "int32"}) / 2
    assert.equal("float64", q.dtype)
    assert.same({0.5, 1.0, 1.5}, q:totable())
  end)

  it("promote two arrays as NumPy does", function()
    local function dtype_of(x, y)
      return (dl.zeros({1}, {dtype = x}) + dl.zeros({1}, {dtype = y})).dtype
    end
    assert.equal("int16", dtype_of("int8", "uint8"))
    assert.equal("float64", dtype_of("int64", "uint64"))
    assert.equal("float64", dtype_of("float32", "int64"))
    assert.equal("float32", dtype_of("float32", "int16"))
    assert.equal("float32", dtype_of("float16", "bfloat16"))
    assert.equal("complex128", dtype_of("complex64", "float64"))
  end)

  it("make bool arrays int64 with Lua integers", function()
    assert.equal("int64", (dl.array{true, false} + 1).dtype)
  end)

  it("raise VALUE when a Lua number does not fit the result dtype", function()
    local u8 = dl.zeros({3}, {dtype = "uint8"})
    expect_code("VALUE", function() return u8 + 300 end)
    expect_code("VALUE", function() return u8 + -1 end)
    expect_code("VALUE", function() return dl.zeros({1}, {dtype = "float16"}) * 1e6 end)
  end)

  it("wrap integer results that overflow, as NumPy does", function()
    local a = dl.array({200, 100}, {dtype = "uint8"})
    assert.same({144, 44}, (a + 200):totable())
  end)

  it("compute float16 in float32 and round once", function()
    local h = dl.array({1, 2048}, {dtype = "float16"}) + 1
    assert.equal("float16", h.dtype)
    assert.same({2, 2048}, h:totable())  -- 2049 is not a float16: rounds to even
  end)
end)

describe("integer division, modulo and powers", function()
  it("floor toward minus infinity, with the sign of the divisor for %", function()
    local a = dl.array{7, -7, 7, -7}
    local b = dl.array{2, 2, -2, -2}
    assert.same({3, -4, -4, 3}, dl.floor_divide(a, b):totable())
    assert.same({1, 1, -1, -1}, (a % b):totable())
  end)

  it("give 0 for floor_divide by 0 and % 0 on integers (NumPy's result), inf or nan on floats", function()
    assert.same({0, 0}, dl.array{5, -5}:floor_divide(0):totable())
    assert.same({0, 0}, (dl.array{5, -5} % 0):totable())
    local f = dl.array({1}, {dtype = "float64"}):floor_divide(0)
    assert.equal(math.huge, f[1])
  end)

  it("wrap products, powers and shifts of small integers", function()
    local function int16(x) x = x % 65536; return x >= 32768 and x - 65536 or x end
    local a = dl.array({-16767, 300}, {dtype = "int16"})
    assert.same({int16(-16767 * -16767), int16(300 * 300)}, (a * a):totable())
    assert.same({(255 * 255) % 256}, (dl.array({255}, {dtype = "uint8"}) ^ 2):totable())
    assert.same({(0xFFFF * 2 ^ 15) % 65536},
                dl.left_shift(dl.array({0xFFFF}, {dtype = "uint16"}), 15):totable())
  end)

  it("wrap the smallest integer floor_divide -1 to itself", function()
    local a = dl.array({-128}, {dtype = "int8"})
    assert.same({-128}, a:floor_divide(-1):totable())
  end)

  it("raise VALUE for an integer to a negative integer power", function()
    expect_code("VALUE", function() return dl.array{2} ^ -1 end)
    assert.same({0.5}, (dl.array({2}, {dtype = "float64"}) ^ -1):totable())
  end)
end)

describe("bitwise functions", function()
  it("work on integers", function()
    local a = dl.array({12, 10}, {dtype = "int32"})
    assert.same({8, 8}, dl.bitwise_and(a, 8):totable())
    assert.same({13, 11}, dl.bitwise_or(a, 1):totable())
    assert.same({6, 0}, dl.bitwise_xor(a, dl.array{10, 10}):totable())
    assert.same({24, 20}, dl.left_shift(a, 1):totable())
    assert.same({3, 2}, dl.right_shift(a, 2):totable())
    assert.same({-13, -11}, dl.bitwise_not(a):totable())
    assert.same({-13, -11}, a:invert():totable()) -- NumPy's name
  end)

  it("shift by the width or more to 0 (or -1 for negative values shifted right)", function()
    local a = dl.array({1, -1}, {dtype = "int8"})
    assert.same({0, 0}, a:left_shift(8):totable())
    assert.same({0, -1}, a:right_shift(9):totable())
  end)

  it("work on bools as logic", function()
    local t, f = dl.array{true, true}, dl.array{true, false}
    assert.same({true, false}, dl.bitwise_and(t, f):totable())
    assert.same({false, true}, dl.bitwise_not(f):totable())
  end)

  it("raise DTYPE on floats", function()
    expect_code("DTYPE", function() return dl.bitwise_and(dl.array{1.5}, 1) end)
  end)
end)

describe("bool arithmetic", function()
  it("treats + as or and * as and (NumPy)", function()
    local a, b = dl.array{true, false, false}, dl.array{true, true, false}
    assert.same({true, true, false}, (a + b):totable())
    assert.same({true, false, false}, (a * b):totable())
  end)

  it("refuses - and unary minus (use logical_xor, logical_not)", function()
    expect_code("DTYPE", function() return dl.array{true} - dl.array{false} end)
    expect_code("DTYPE", function() return -dl.array{true} end)
  end)
end)

describe("maximum and minimum", function()
  it("pick element-wise and propagate NaN", function()
    local a, b = dl.array{1, 5, 0 / 0}, dl.array{3, 2, 1}
    local m = dl.maximum(a, b)
    assert.same({3, 5}, {m[1], m[2]})
    assert.is_true(m[3] ~= m[3])
    assert.same({1, 2}, {dl.minimum(a, b)[1], dl.minimum(a, b)[2]})
  end)

  it("refuse complex numbers (they have no order)", function()
    expect_code("DTYPE", function() return dl.maximum(dl.zeros({1}, {dtype = "complex64"}), 1) end)
  end)
end)

describe("the out option", function()
  it("writes into an existing array and returns it", function()
    local a, b = dl.array{1, 2}, dl.array{3, 4}
    local c = dl.empty({2}, {dtype = "int64"})
    assert.equal(c, dl.add(a, b, {out = c}))
    assert.same({4, 6}, c:totable())
  end)

  it("may be an input: in place", function()
    local a = dl.array{1, 2, 3}
    a:mul(10, {out = a})
    assert.same({10, 20, 30}, a:totable())
  end)

  it("casts the result into out's dtype when the kinds allow (same_kind)", function()
    local c = dl.empty({2}, {dtype = "float32"})
    dl.add(dl.array{1.5, 2.5}, 1, {out = c})
    assert.same({2.5, 3.5}, c:totable())
    -- a float result does not go into an integer array
    expect_code("DTYPE", function() return dl.add(dl.array{1.5}, 1, {out = dl.empty({1}, {dtype = "int64"})}) end)
  end)

  it("reads inputs as if copied first when out overlaps them", function()
    local a = dl.array{1, 2, 3, 4}
    -- out is a shifted view of a: a[2..4] = a[1..3] + 0
    dl.add(a:narrow(1, 1, 3), 0, {out = a:narrow(1, 2, 3)})
    assert.same({1, 1, 2, 3}, a:totable())
  end)

  it("must have the broadcast shape exactly (SHAPE) and be writable (READ_ONLY)", function()
    expect_code("SHAPE", function() return dl.add(dl.zeros{3}, 1, {out = dl.zeros{1}}) end)
    local expanded = dl.zeros{1, 3}:expand{2, 3} -- a broadcast view is read-only
    expect_code("READ_ONLY", function() return dl.add(dl.zeros{2, 3}, 1, {out = expanded}) end)
  end)

  it("must be live (DELETED): a deleted out is never given new memory", function()
    local c = dl.zeros{2}
    c:delete()
    expect_code("DELETED", function() return dl.add(dl.zeros{2}, 1, {out = c}) end)
    expect_code("DELETED", function() return tostring(c.shape) end)
  end)

  it("refuses unknown options", function()
    expect_code("ARGUMENT", function() return dl.add(dl.zeros{1}, 1, {outt = dl.zeros{1}}) end)
  end)
end)

describe("misuse", function()
  it("raises ARGUMENT for non-numeric operands", function()
    expect_code("ARGUMENT", function() return dl.zeros{2} + "3" end)
    expect_code("ARGUMENT", function() return dl.add(dl.zeros{2}) end)
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros{2}
    a:delete()
    expect_code("DELETED", function() return a + 1 end)
  end)

  it("raises ARGUMENT for < and <= between arrays, pointing to a:lt(b)", function()
    local err = expect_code("ARGUMENT", function() return dl.zeros{2} < dl.zeros{2} end)
    assert.matches("a:lt", err.message)
  end)
end)
