-- Reductions: folding the elements of an array, along some dims or all.
--
-- This file documents, each as a method and as a module function:
--   a:sum(opts)    dl.sum(a, opts)     the sum
--   a:prod(opts)   dl.prod(a, opts)    the product
--   a:mean(opts)   dl.mean(a, opts)    the arithmetic mean
--   a:std(opts)    dl.std(a, opts)     the standard deviation
--   a:var(opts)    dl.var(a, opts)     the variance
--   a:min(opts)    dl.min(a, opts)     the smallest element
--   a:max(opts)    dl.max(a, opts)     the largest element
--   a:argmin(opts) dl.argmin(a, opts)  the 1-based index of the smallest
--   a:argmax(opts) dl.argmax(a, opts)  the 1-based index of the largest
--   a:all(opts)    dl.all(a, opts)     whether every element is nonzero
--   a:any(opts)    dl.any(a, opts)     whether some element is nonzero
--   a:count_nonzero(opts) dl.count_nonzero(a, opts)  how many are nonzero
-- Options (a table; every key optional, unknown keys raise ARGUMENT):
--   dim       a dim or a list of dims to reduce (1-based, negative counts
--             from the end); default: every dim. argmin/argmax take one dim
--             (or none: the flat row-major index)
--   keepdims  true: the reduced dims stay, with extent 1
--   dtype     sum, prod, mean, std, var: the result dtype, which the
--             elements are converted to before they are combined
--   ddof      std, var: divide by n - ddof (default 0)
--   out       an array to write the result into; the call returns it
-- A plain integer stands for {dim = n}: a:sum(1) is a:sum{dim = 1}.
--
-- Reducing every dim (no keepdims, no out) returns a Lua value, as NumPy
-- returns a scalar: a number, an integer, a boolean, or {re=, im=} for
-- complex. Anything else returns a new array.
--
-- Result dtypes follow NumPy: sum and prod of bool and signed integers give
-- int64, of unsigned integers uint64 (integer sums wrap around), of floats
-- and complex their own dtype; mean, std and var of bool and integers give
-- float64, of floats their own dtype (std and var of complex: the real
-- dtype); min and max keep the dtype; argmin, argmax and count_nonzero give
-- int64; all and any give bool.
--
-- Float sums are pairwise, as NumPy's, and give NumPy's bits where the
-- reduced dim is the memory-contiguous one. min, max, argmin and argmax
-- propagate NaN (argmin/argmax: the first NaN's index); ties give the first
-- index. Empty reductions: sum 0, prod 1, all true, any false, mean, std
-- and var NaN; min, max, argmin and argmax raise VALUE. Complex numbers have
-- no order here: their min, max, argmin and argmax raise DTYPE.
local dl = require "dlbridge"
local support = require "support"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local string_unpack = support.string_unpack -- string.unpack likewise

local expect_code = support.expect_code

-- x rounded to float32, as a Lua number.
local function f32(x) return (string_unpack("f", string_pack("f", x))) end

local nan = 0 / 0

local function is_nan(x) return x ~= x end

describe("reducing every dim", function()
  local a = dl.array{{1, 2, 3}, {4, 5, 6}}

  it("gives a Lua value", function()
    assert.equal(21, a:sum())
    assert.equal(720, a:prod())
    assert.equal(3.5, a:mean())
    assert.equal(1, a:min())
    assert.equal(6, a:max())
    assert.is_true(a:all())
    assert.is_true(a:any())
    assert.equal(6, a:count_nonzero())
  end)

  it("gives integers for integer results and floats for float ones", function()
    -- (told apart by math.type on Lua 5.3 and later: spec/lua53/reductions_spec.lua)
    local i = dl.array({1, 2, 3}, {dtype = "int32"})
    assert.equal("6", tostring(i:sum())) -- not "6.0"
    assert.equal("3", tostring(i:max()))
    assert.equal(2, i:mean())
    assert.equal(1.5, dl.array{1.5}:sum())
  end)

  it("gives {re=, im=} for complex results", function()
    local c = dl.array({{re = 1, im = 2}, {re = 3, im = -1}, {re = -2, im = 0.5}},
                       {dtype = "complex128"})
    assert.same({re = 2.0, im = 1.5}, c:sum())
    assert.same({re = -12.5, im = -7.5}, c:prod())
    local m = c:mean()
    assert.near(2 / 3, m.re, 1e-15)
    assert.equal(0.5, m.im)
    assert.near(5.722222222222222, c:var(), 1e-14) -- the mean of |x - mean|^2, real
  end)

  it("of an empty array is the identity, however large its other extents", function()
    local empty = dl.zeros{0, 2 ^ 62} -- (math.maxinteger on Lua 5.3 and later: spec/lua53)
    assert.equal(0, empty:sum())
    assert.equal(1, empty:prod())
    assert.equal(0, empty:count_nonzero())
  end)

  it("is the same as a module function", function()
    assert.equal(21, dl.sum(a))
    assert.equal(6, dl.argmax(a))
    assert.equal(3.5, dl.mean(a))
  end)
end)

describe("dim and keepdims", function()
  local a = dl.array{{1, 2, 3}, {4, 5, 6}}

  it("reduces the dims given, keeping the others in order", function()
    assert.same({5, 7, 9}, a:sum{dim = 1}:totable())
    assert.same({6, 15}, a:sum{dim = 2}:totable())
    assert.same({6, 15}, a:sum{dim = -1}:totable())
    assert.same({2, 5}, a:mean{dim = 2}:totable())
  end)

  it("takes a plain integer for {dim = n}", function()
    assert.same({5, 7, 9}, a:sum(1):totable())
    assert.same({3, 6}, dl.max(a, 2):totable())
  end)

  it("takes a list of dims", function()
    local img = dl.array({{{10, 20, 30}, {40, 50, 60}}, {{70, 80, 90}, {100, 110, 121}}},
                         {dtype = "uint8"})                 -- height x width x channel
    assert.same({55, 65, 75.25}, img:mean{dim = {1, 2}}:totable())  -- per channel
    assert.same({100, 110, 121}, img:max{dim = {1, 2}}:totable())
    assert.equal("uint8", img:max{dim = {1, 2}}.dtype)
    assert.equal(781, img:sum{dim = {1, 2, 3}})             -- every dim: a Lua value
  end)

  it("reduces nothing for an empty list", function()
    local s = a:sum{dim = {}}
    assert.same({{1, 2, 3}, {4, 5, 6}}, s:totable())
    assert.equal("int64", s.dtype)
  end)

  it("keeps the reduced dims with extent 1 under keepdims", function()
    assert.same({2, 1}, a:sum{dim = 2, keepdims = true}.shape)
    assert.same({{6}, {15}}, a:sum{dim = 2, keepdims = true}:totable())
    local all = a:sum{keepdims = true}                      -- an array, not a Lua value
    assert.same({1, 1}, all.shape)
    assert.equal(21, all[1][1])
  end)
end)

describe("result dtypes", function()
  it("follow NumPy", function()
    local function dtype_of(op, dtype)
      return dl[op](dl.ones({2, 2}, {dtype = dtype}), {dim = 1}).dtype
    end
    assert.equal("int64", dtype_of("sum", "bool"))
    assert.equal("int64", dtype_of("sum", "int8"))
    assert.equal("uint64", dtype_of("sum", "uint16"))
    assert.equal("uint64", dtype_of("prod", "uint8"))
    assert.equal("float16", dtype_of("sum", "float16"))
    assert.equal("complex64", dtype_of("sum", "complex64"))
    assert.equal("float64", dtype_of("mean", "int32"))
    assert.equal("float32", dtype_of("mean", "float32"))
    assert.equal("bfloat16", dtype_of("mean", "bfloat16"))
    assert.equal("float64", dtype_of("var", "uint8"))
    assert.equal("float32", dtype_of("std", "complex64"))
    assert.equal("bool", dtype_of("max", "bool"))
    assert.equal("uint32", dtype_of("min", "uint32"))
    assert.equal("int64", dtype_of("argmax", "float16"))
    assert.equal("bool", dtype_of("all", "float64"))
    assert.equal("int64", dtype_of("count_nonzero", "int8"))
  end)

  it("are set by the dtype option, converting the elements first", function()
    local a = dl.array({200, 100}, {dtype = "uint8"})
    assert.equal(300, a:sum())                              -- uint64: no overflow
    assert.equal(44, a:sum{dtype = "uint8"})                -- 300 mod 256, as NumPy
    assert.equal(300.0, a:sum{dtype = "float32"})
    assert.equal("float32", a:mean{dtype = "float32", keepdims = true}.dtype)
    assert.is_true(dl.array{1, -1}:sum{dtype = "bool"})     -- true + true: logical or
  end)

  it("wrap integer sums around, as NumPy", function()
    -- {math.maxinteger, 1} as int64, made from its bytes on every Lua
    -- (the sum, math.mininteger, is a number on Lua 5.3 and later: spec/lua53; here its bytes)
    local max_and_one = dl.frombytes("\255\255\255\255\255\255\255\127" .. "\1\0\0\0\0\0\0\0", "int64")
    assert.equal("\0\0\0\0\0\0\0\128", max_and_one:sum{keepdims = true}:tobytes())
    assert.equal(-128, dl.array({127, 1}, {dtype = "int8"}):sum{dtype = "int8"})
  end)
end)

describe("float sums", function()
  it("are pairwise: 1e7 float32 ones sum to exactly 1e7", function()
    assert.equal(1e7, dl.ones(10000000, {dtype = "float32"}):sum())
    assert.equal(1.0, dl.ones(10000000, {dtype = "float32"}):mean())
  end)

  it("give NumPy's bits along the contiguous dim", function()
    -- np.full(10**6, 0.1, np.float32).sum() == 100000.086 (one by one: 100958.34)
    local a = dl.full(1000000, 0.1, {dtype = "float32"})
    assert.equal(f32(100000.086), a:sum())
    assert.equal(f32(0.2), dl.array({0.1, 0.2, 0.3}, {dtype = "float32"}):mean())
  end)

  it("accumulate float16 in float32 and round once", function()
    local h = dl.ones(3000, {dtype = "float16"})            -- float16 steps stall at 2048
    assert.equal(3000, h:sum())
    assert.equal(2.5, dl.array({1.5, 2.5, 3.5}, {dtype = "float16"}):mean())
  end)
end)

describe("mean, std and var", function()
  local b = dl.array{2, 4, 4, 4, 5, 5, 7, 9}

  it("convert the elements to a float16 dtype option before they combine them", function()
    -- 2049 and 2048 are both 2048 in float16 and bfloat16: no spread left
    local a = dl.array({2049, 2048}, {dtype = "float32"})
    assert.equal(0, a:var{dtype = "float16"})
    assert.equal(0, a:std{dtype = "bfloat16"})
    assert.equal(0.25, a:var())
  end)

  it("divide by n, or by n - ddof", function()
    assert.equal(5, b:mean())
    assert.equal(4, b:var())
    assert.equal(2, b:std())
    assert.near(2.138089935299395, b:std{ddof = 1}, 1e-15)
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.same({1.5, 1.5, 1.5}, a:std{dim = 1}:totable())
    assert.equal(3.5, a:var{ddof = 1})
  end)

  it("give inf or NaN when n - ddof <= 0, as NumPy", function()
    assert.equal(math.huge, dl.array{1, 2}:var{ddof = 2})
    assert.is_true(is_nan(dl.array{1, 1}:var{ddof = 2}))
    assert.equal(math.huge, dl.array{1, 2}:var{ddof = 5})
  end)

  it("compute float32 in float32", function()
    local f = dl.array({0.1, 0.2, 0.3}, {dtype = "float32"})
    assert.equal(f32(0.08164966), f:std())
    assert.equal("float32", f:std{keepdims = true}.dtype)
  end)
end)

describe("min, max, argmin, argmax", function()
  local a = dl.array{{3, 7, 7}, {9, 1, 9}}

  it("find the extremes and their 1-based indices", function()
    assert.equal(9, a:max())
    assert.equal(1, a:min())
    assert.equal(4, a:argmax())                             -- flat row-major: the first 9
    assert.equal(5, a:argmin())
    assert.same({2, 1, 2}, a:argmax(1):totable())           -- which row, per column
    assert.same({2, 1}, a:argmax{dim = 2}:totable())        -- ties: the first index
    assert.same({{1}, {2}}, a:argmin{dim = -1, keepdims = true}:totable())
  end)

  it("count the flat index in row-major order, whatever the layout", function()
    local t = a:transpose()                                 -- {{3, 9}, {7, 1}, {7, 9}}
    assert.equal(2, t:argmax())
    assert.equal(4, t:argmin())
  end)

  it("propagate NaN; argmin and argmax give the first NaN", function()
    local x = dl.array{1, nan, 3, nan}
    assert.is_true(is_nan(x:max()))
    assert.is_true(is_nan(x:min()))
    assert.equal(2, x:argmax())
    assert.equal(2, x:argmin())
    local m = dl.array{{1, nan}, {2, 0}}
    assert.is_true(is_nan(m:max(1):totable()[2]))
    assert.same({2, 1}, m:argmax(1):totable())
  end)

  it("order booleans false < true", function()
    local b = dl.array{false, true, false}
    assert.is_true(b:max())
    assert.is_false(b:min())
    assert.equal(2, b:argmax())
  end)

  it("raise VALUE for an empty reduction", function()
    expect_code("VALUE", dl.max, dl.zeros(0))
    expect_code("VALUE", dl.argmin, dl.zeros(0))
    expect_code("VALUE", dl.min, dl.zeros{3, 0}, {dim = 2})
    -- no result element at all is no error
    assert.same({0}, dl.zeros{0, 3}:max{dim = 2}.shape)
  end)

  it("raise DTYPE for complex numbers", function()
    local c = dl.zeros(3, {dtype = "complex64"})
    local err = expect_code("DTYPE", c.max, c)
    assert.matches("complex", err.message)
    expect_code("DTYPE", dl.argmax, c)
  end)
end)

describe("all, any, count_nonzero", function()
  it("count nonzero elements; NaN counts as nonzero", function()
    local mask = dl.array{{true, false, true}, {true, true, true}}
    assert.equal(5, mask:count_nonzero())
    assert.same({2, 3}, mask:count_nonzero{dim = 2}:totable())
    assert.is_false(mask:all())
    assert.same({true, false, true}, mask:all(1):totable())
    assert.is_true(mask:any())
    assert.is_true(dl.array{0, nan}:any())
    local negative_zero = -1 / math.huge -- Lua 5.1 may fold a literal -0.0 into 0
    assert.equal(1, dl.array{0.0, negative_zero, nan}:count_nonzero())
  end)
end)

describe("empty arrays", function()
  it("give NumPy's identities", function()
    local e = dl.zeros(0)
    assert.equal(0, e:sum())
    assert.equal(1, e:prod())
    assert.is_true(e:all())
    assert.is_false(e:any())
    assert.equal(0, e:count_nonzero())
    assert.is_true(is_nan(e:mean()))
    assert.is_true(is_nan(e:std()))
    assert.same({0, 0, 0}, dl.zeros{3, 0}:sum(2):totable())
  end)
end)

describe("views", function()
  it("reduce transposed, reversed, stepped and broadcast arrays", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.same({6, 15}, a:transpose():sum(1):totable())
    local r = a:slice(2, -1, 1, -1)                          -- columns reversed
    assert.same({{3, 2, 1}, {6, 5, 4}}, r:totable())
    assert.same({1, 1}, r:argmax(2):totable())
    assert.equal(4, a:slice(2, 1, -1, 2):sum{dim = 2}:totable()[1])  -- columns 1, 3
    local e = dl.array{1, 2, 3}:expand{4, 3}                 -- 4 copies of a row
    assert.same({4, 8, 12}, e:sum(1):totable())
    assert.equal(24, e:sum())
  end)

  it("reduce 0-d arrays to their element", function()
    local z = dl.array(5)
    assert.equal(5, z:sum())
    assert.equal(1, z:argmax())
    assert.equal(5.0, z:mean())
  end)
end)

describe("the out option", function()
  it("writes the result into out and returns it", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    local out = dl.zeros(3)                                 -- float64: the int64 sums fit
    assert.equal(out, a:sum{dim = 1, out = out})
    assert.same({5, 7, 9}, out:totable())
    local whole = dl.zeros({}, {dtype = "int64"})           -- every dim: a 0-d out
    assert.equal(whole, a:sum{out = whole})
    assert.equal(21, whole:totable())
  end)

  it("may overlap the input", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    a:max{dim = 1, out = a:select(1, 1)}                    -- row 1 gets the column maxima
    assert.same({{4, 5, 6}, {4, 5, 6}}, a:totable())
  end)
end)

describe("misuse", function()
  local a = dl.array{{1, 2, 3}, {4, 5, 6}}

  it("raises INDEX for a dim out of range", function()
    expect_code("INDEX", a.sum, a, 3)
    expect_code("INDEX", a.sum, a, {dim = {1, -3}})
    expect_code("INDEX", dl.array(1).sum, dl.array(1), 1)
  end)

  it("raises ARGUMENT for a dim listed twice, or a bad dim value", function()
    expect_code("ARGUMENT", a.sum, a, {dim = {1, -2}})
    expect_code("ARGUMENT", a.sum, a, {dim = "1"})
    expect_code("ARGUMENT", a.argmax, a, {dim = {1, 2}})    -- one dim, or none
  end)

  it("raises ARGUMENT for unknown or misplaced options", function()
    expect_code("ARGUMENT", a.sum, a, {axis = 1})
    expect_code("ARGUMENT", a.sum, a, {keepdims = 1})
    expect_code("ARGUMENT", a.sum, a, {ddof = 1})           -- std and var only
    expect_code("ARGUMENT", a.max, a, {dtype = "float32"})  -- sum, prod, mean, std, var only
    expect_code("ARGUMENT", a.std, a, {ddof = "1"})
    expect_code("ARGUMENT", a.sum, a, "everything")
    expect_code("ARGUMENT", a.sum, a, {}, {})
  end)

  it("raises DTYPE for an unknown dtype or an integer one for mean, std, var", function()
    expect_code("DTYPE", a.sum, a, {dtype = "float128"})
    expect_code("DTYPE", a.mean, a, {dtype = "int32"})
  end)

  it("raises DELETED for a deleted array or out", function()
    local d = dl.zeros(3)
    d:delete()
    expect_code("DELETED", d.sum, d)
    expect_code("DELETED", dl.max, d, 1)
    expect_code("DELETED", a.sum, a, {dim = 1, out = d})
  end)

  it("raises ARGUMENT for something that is not an array", function()
    expect_code("ARGUMENT", dl.sum, {1, 2, 3})
    expect_code("ARGUMENT", dl.mean)
  end)

  it("checks out as element-wise operations do", function()
    expect_code("SHAPE", a.sum, a, {dim = 1, out = dl.zeros(2)})
    expect_code("DTYPE", a.mean, a, {dim = 1, out = dl.zeros(3, {dtype = "int32"})})
    expect_code("READ_ONLY", a.sum, a, {dim = 1, out = support.readonly_array():select(1, 1)})
    expect_code("ARGUMENT", a.sum, a, {out = 5})
  end)

  it("raises UNSUPPORTED on memory the host cannot address, with the way out", function()
    local tb = require "testbackend"
    local name = "engine_reductions"
    if not support.registered(name) then tb.register{name = name, exportable = false} end
    local e = dl.zeros(3, {device = name})
    local err = expect_code("UNSUPPORTED", e.sum, e)
    assert.matches("device_put", err.hint, 1, true)
    assert.equal(3, dl.device_put(dl.ones(3, {device = name}), "cpu"):sum())
  end)
end)
