-- Shapes at the edges: 0-d arrays, size-0 arrays, many dimensions, and
-- sizes too large to represent.
--
-- * A 0-d array has shape {} and holds exactly one element (dl.array(5),
--   dl.zeros{}); a size-0 array has some extent 0 (dl.zeros{2, 0}) and
--   holds none. Both work in every operation.
-- * An array has at most 32 dimensions; more raise SHAPE.
-- * A shape whose element count or byte size does not fit in 64 bits
--   raises SHAPE: sizes are checked, never wrapped. A size that fits but
--   cannot be allocated raises OUT_OF_MEMORY.
local dl = require "dlbridge"
local support = require "support"

local error_code = support.code_of

-- A table of n ones.
local function ones_shape(n)
  local s = {}
  for i = 1, n do s[i] = 1 end
  return s
end

describe("a 0-d array", function()
  it("is made by dl.array(scalar) or an empty shape table", function()
    for _, z in ipairs{dl.array(5), dl.zeros{}, dl.ones{}, dl.empty{}, dl.full({}, 7)} do
      assert.equal(0, z.ndim)
      assert.same({}, z.shape)
      assert.same({}, z.strides)
      assert.equal(1, z.size)
    end
    assert.equal(5, dl.array(5):get())
    assert.equal(0, dl.zeros{}:get())
    assert.equal(1, dl.ones{}:get())
    assert.equal(7, dl.full({}, 7):get())
  end)

  it("has the byte size of one element", function()
    local z = dl.zeros({}, {dtype = "int16"})
    assert.equal(2, z.itemsize)
    assert.equal(2, z.nbytes)
  end)

  it("prints as a scalar", function()
    local s = tostring(dl.array(5))
    assert.matches("array%(5,", s)
    assert.matches("shape=%(%)", s)
  end)

  it("converts to a plain Lua value with totable", function()
    assert.equal(5, dl.array(5):totable())
    assert.equal(2.5, dl.array(2.5):totable())
    assert.equal(true, dl.array(true):totable())
  end)

  it("copies, converts and fills", function()
    local z = dl.array(3.5)
    local c = z:copy()
    c:set(1)
    assert.equal(3.5, z:get())
    assert.equal(3, z:astype("int32"):get())
    assert.equal("int32", z:astype("int32").dtype)
    z:fill(2)
    assert.equal(2, z:get())
    z:copy_from(dl.array(9))
    assert.equal(9, z:get())
  end)

  it("takes views: view, reshape, unsqueeze, expand, transpose", function()
    local z = dl.array(5)
    assert.same({1}, z:view{1}.shape)
    assert.same({1, 1}, z:reshape{1, 1}.shape)
    assert.same({1}, z:unsqueeze(1).shape)
    assert.same({1}, z:unsqueeze(-1).shape)
    assert.same({5, 5, 5}, z:expand{3}:totable())
    assert.same({}, z:transpose().shape)
    assert.same({}, z:squeeze().shape)
    assert.same({}, z:view{}.shape)
    assert.is_true(z:is_contiguous())
    assert.is_true(rawequal(z, z:contiguous()))
  end)

  it("is what a size-1 array views as with an empty shape", function()
    local a = dl.array{42}
    local z = a:view{}
    assert.equal(0, z.ndim)
    z:set(43)
    assert.equal(43, a[1])
  end)

  it("has no dimensions to index, length or slice", function()
    local z = dl.array(5)
    assert.equal("INDEX", error_code(function() return z[1] end))
    assert.equal("SHAPE", error_code(function() return #z end))
    assert.equal("INDEX", error_code(function() return z:slice(1) end))
    assert.equal("INDEX", error_code(function() return z:squeeze(1) end))
  end)
end)

describe("a size-0 array", function()
  it("has an extent 0 somewhere and no elements", function()
    local a = dl.zeros{2, 0, 3}
    assert.same({2, 0, 3}, a.shape)
    assert.equal(3, a.ndim)
    assert.equal(0, a.size)
    assert.equal(0, a.nbytes)
    assert.equal(2, #a)
    assert.equal(0, #dl.zeros{0})
  end)

  it("is made by every constructor", function()
    assert.equal(0, dl.ones{0}.size)
    assert.equal(0, dl.empty{0, 4}.size)
    assert.equal(0, dl.full({3, 0}, 1).size)
    assert.equal(0, dl.arange(0).size)
    assert.equal(0, dl.frombytes("", "float32").size)
    assert.same({0}, dl.array{}.shape)
    assert.same({2, 0}, dl.array{{}, {}}.shape)
  end)

  it("prints as an empty array with its shape", function()
    local s = tostring(dl.zeros{2, 0})
    assert.matches("%[%]", s)
    assert.matches("shape=%(2, 0%)", s)
  end)

  it("converts to (nested) empty tables", function()
    assert.same({}, dl.zeros{0}:totable())
    assert.same({{}, {}}, dl.zeros{2, 0, 3}:totable())
    assert.equal("", dl.zeros{0, 3}:tobytes())
  end)

  it("copies, converts and fills", function()
    local a = dl.zeros{2, 0}
    assert.same({2, 0}, a:copy().shape)
    assert.equal("int8", a:astype("int8").dtype)
    assert.same({2, 0}, a:astype("int8").shape)
    assert.is_true(rawequal(a, a:fill(1)))
    a:copy_from(5)
    assert.equal(0, a.size)
  end)

  it("takes views", function()
    local a = dl.zeros{0, 3}
    assert.same({3, 0}, a:transpose().shape)
    assert.same({3, 0}, a:permute{2, 1}.shape)
    assert.same({0, 5}, dl.zeros{0}:view{0, 5}.shape)
    assert.same({0}, a:view{-1}.shape)
    assert.same({3, 0}, a:reshape{3, 0}.shape)
    assert.same({0, 2}, a:narrow(2, 2, 2).shape)
    assert.same({0, 3}, a:slice(1).shape)
    assert.same({0}, a:select(2, 3).shape)
    assert.same({0, 1, 3}, a:unsqueeze(2).shape)
    assert.same({0, 3}, dl.zeros{0, 1, 3}:squeeze().shape)
    assert.same({2, 0, 3}, a:expand{2, 0, 3}.shape)
    assert.same({0, 3}, dl.zeros{1, 3}:expand{0, 3}.shape)
  end)

  it("is contiguous whatever its strides", function()
    local a = dl.zeros{0, 3}
    assert.is_true(a:transpose():is_contiguous())
    assert.is_true(rawequal(a, a:contiguous()))
  end)

  it("has no elements to index", function()
    local a = dl.zeros{0}
    assert.is_nil(a[1]) -- past the end: nil, as for an empty table
    assert.equal("INDEX", error_code(a.get, a, 1))
    assert.equal("INDEX", error_code(function() return dl.zeros{0, 3}:select(1, 1) end))
  end)
end)

describe("the number of dimensions", function()
  it("can be up to 32", function()
    local a = dl.zeros(ones_shape(32))
    assert.equal(32, a.ndim)
    assert.equal(1, a.size)
    assert.same(ones_shape(32), a.shape)
    assert.equal(0, a:get(table.unpack(ones_shape(32))))
    assert.matches("shape=%(1, 1,", tostring(a))
    assert.equal(1, dl.ones(ones_shape(32)):view{1}:get(1))
    assert.same({1}, a:squeeze():unsqueeze(1).shape)
  end)

  it("raises SHAPE at 33", function()
    local ok, err = pcall(function() return dl.zeros(ones_shape(33)) end)
    assert.is_false(ok)
    assert.equal("SHAPE", err.code)
  end)

  it("raises SHAPE when a view would pass 32", function()
    local a = dl.zeros(ones_shape(32))
    assert.equal("SHAPE", error_code(function() return a:unsqueeze(1) end))
    assert.equal("SHAPE", error_code(function() return a:view(ones_shape(33)) end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{1}:expand(ones_shape(33)) end))
  end)

  it("raises SHAPE for tables nested deeper than 32", function()
    local t = 0
    for _ = 1, 33 do t = {t} end
    assert.equal("SHAPE", error_code(function() return dl.array(t) end))
  end)
end)

describe("sizes that overflow", function()
  it("raise SHAPE when the element count overflows int64", function()
    local big = 2147483648 -- 2^31, an integer
    local ok, err = pcall(function() return dl.zeros{big, big, big} end)
    assert.is_false(ok)
    assert.equal("SHAPE", err.code)
    assert.equal("SHAPE", error_code(function() return dl.zeros{2^62, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros({2^40, 2^40}, {dtype = "int8"}) end))
  end)

  it("raise SHAPE when the byte size overflows, though the count fits", function()
    -- 2^61 float64 elements are 2^64 bytes
    assert.equal("SHAPE", error_code(function() return dl.zeros{2^61} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{2^60} end))
    assert.equal("SHAPE", error_code(function() return dl.empty({2^62}, {dtype = "int16"}) end))
  end)

  it("raise SHAPE in every constructor", function()
    -- (math.maxinteger as an extent, Lua 5.3 and later: spec/lua53/shapes_spec.lua)
    assert.equal("SHAPE", error_code(function() return dl.ones{2^62, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.empty{2^62, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.full({2^62, 2}, 1) end))
  end)

  it("raise SHAPE in views", function()
    assert.equal("SHAPE", error_code(function() return dl.zeros{3}:view{2^62, 2} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{1, 1}:expand{2^62, 4} end))
  end)

  it("still raise SHAPE when another extent is 0 (the strides would overflow), as NumPy does", function()
    assert.equal("SHAPE", error_code(function() return dl.zeros{0, 2^62, 2^62} end))
  end)

  it("are fine when an extent is 0 and the other extents multiply without overflow", function()
    local a = dl.zeros{0, 2^31, 2^31}
    assert.equal(0, a.size)
    assert.equal(0, a.nbytes)
  end)

  it("a representable size that cannot be allocated raises OUT_OF_MEMORY", function()
    -- 2^47 float64 elements are 2^50 bytes: a valid size, but no machine has it
    local ok, err = pcall(function() return dl.zeros{2^47} end)
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.equal("OUT_OF_MEMORY", error_code(function() return dl.empty({2^48}, {dtype = "int8"}) end))
  end)
end)

describe("shape arguments", function()
  it("are a table of integers or one integer", function()
    assert.same({3}, dl.zeros(3).shape)
    assert.same({2, 3}, dl.zeros{2, 3}.shape)
    assert.same({2, 3}, dl.zeros{2.0, 3.0}.shape)
  end)

  it("raise SHAPE for a negative or fractional extent", function()
    assert.equal("SHAPE", error_code(function() return dl.zeros{-1} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{2, -3} end))
    assert.equal("SHAPE", error_code(function() return dl.zeros{1.5} end))
  end)

  it("raise ARGUMENT for a value that is not a shape", function()
    assert.equal("ARGUMENT", error_code(function() return dl.zeros("3") end))
    assert.equal("ARGUMENT", error_code(function() return dl.zeros{"3"} end))
    assert.equal("ARGUMENT", error_code(function() return dl.zeros{x = 3} end))
  end)
end)
