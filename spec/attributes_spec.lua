-- Array attributes: what an array tells about itself.
--
--   a.shape     extents, a fresh table each time       {2, 3}
--   a.strides   steps between elements, in ELEMENTS    {3, 1}
--   a.ndim      number of dimensions                   2
--   a.size      number of elements                     6
--   a.dtype     element type name                      "float64"
--   a.itemsize  bytes per element                      8
--   a.nbytes    size * itemsize                        48
--   a.device    "backend:id"                           "cpu:0"
--   a.backend   backend name                           "cpu"
--   a.readonly  whether writes are refused             false
--   #a          extent of the first dimension          2
--
-- Attributes are read-only: assigning any field raises ARGUMENT.
-- dl.is_array(v) tells whether v is an array.
local dl = require "dlbridge"
local support = require "support"

local error_code = support.code_of

describe("a.shape", function()
  it("lists the extents, first dimension first", function()
    assert.same({2, 3, 4}, dl.zeros{2, 3, 4}.shape)
    assert.same({3}, dl.array{1, 2, 3}.shape)
    assert.same({2, 2}, dl.array{{1, 2}, {3, 4}}.shape)
  end)

  it("holds whole numbers (Lua integers on 5.3 and later: spec/lua53/attributes_spec.lua)", function()
    local shape = dl.zeros{2.0, 3}.shape
    assert.same({2, 3}, shape)
    assert.equal("2,3", table.concat(shape, ",")) -- no "2.0"
  end)

  it("is a fresh table each time: changing it does not change the array", function()
    local a = dl.zeros{2, 3}
    local s = a.shape
    assert.is_false(rawequal(s, a.shape))
    s[1] = 100
    s[3] = 7
    assert.same({2, 3}, a.shape)
    assert.equal(6, a.size)
  end)

  it("is {} for a 0-d array", function()
    assert.same({}, dl.array(5).shape)
  end)
end)

describe("a.strides", function()
  it("counts elements, not bytes, row-major for a new array", function()
    assert.same({12, 4, 1}, dl.zeros{2, 3, 4}.strides)
    assert.same({12, 4, 1}, dl.zeros({2, 3, 4}, {dtype = "int8"}).strides)
    assert.same({12, 4, 1}, dl.zeros({2, 3, 4}, {dtype = "complex128"}).strides)
  end)

  it("of a transposed view are the base's strides reversed", function()
    local a = dl.zeros{2, 3, 4}
    assert.same({1, 4, 12}, a:transpose().strides)
    assert.same({4, 12, 1}, a:transpose(1, 2).strides)
  end)

  it("of a stepped or reversed slice are multiplied by the step", function()
    local m = dl.zeros{4, 6}
    assert.same({6, 2}, m:slice(2, 1, -1, 2).strides)
    assert.same({-6, 1}, m:slice(1, -1, 1, -1).strides)
  end)

  it("are 0 along expanded dimensions", function()
    assert.same({0, 1}, dl.zeros{1, 3}:expand{5, 3}.strides)
  end)

  it("are {} for a 0-d array", function()
    assert.same({}, dl.array(5).strides)
  end)

  it("are a fresh table each time", function()
    local a = dl.zeros{2, 3}
    a.strides[1] = 99
    assert.same({3, 1}, a.strides)
  end)
end)

describe("a.ndim and a.size", function()
  it("give the number of dimensions and of elements", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal(3, a.ndim)
    assert.equal(24, a.size)
    assert.equal("24", tostring(a.size)) -- a whole number (an integer on Lua 5.3 and later)
  end)

  it("follow views", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal(2, a[1].ndim)
    assert.equal(12, a[1].size)
    assert.equal(16, a:narrow(2, 2, 2).size)
    assert.equal(40, dl.zeros{1, 4}:expand{10, 4}.size)
  end)

  it("of a 0-d array are 0 and 1; of a size-0 array, size is 0", function()
    assert.equal(0, dl.array(5).ndim)
    assert.equal(1, dl.array(5).size)
    assert.equal(2, dl.zeros{3, 0}.ndim)
    assert.equal(0, dl.zeros{3, 0}.size)
  end)
end)

describe("a.dtype, a.itemsize and a.nbytes", function()
  it("dtype is the element type's name; float64 by default", function()
    assert.equal("float64", dl.zeros{2}.dtype)
    assert.equal("int64", dl.array{1, 2}.dtype)
    assert.equal("float64", dl.array{1, 2.5}.dtype)
    assert.equal("bool", dl.array{true}.dtype)
    assert.equal("uint16", dl.zeros({2}, {dtype = "uint16"}).dtype)
  end)

  it("itemsize is the size of one element in bytes", function()
    local sizes = {bool = 1, int8 = 1, uint8 = 1, int16 = 2, uint16 = 2, float16 = 2,
                   bfloat16 = 2, int32 = 4, uint32 = 4, float32 = 4, int64 = 8, uint64 = 8,
                   float64 = 8, complex64 = 8, complex128 = 16}
    for dtype, size in pairs(sizes) do
      assert.equal(size, dl.zeros({1}, {dtype = dtype}).itemsize, dtype)
    end
  end)

  it("nbytes is size * itemsize", function()
    assert.equal(48, dl.zeros{2, 3}.nbytes)
    assert.equal(24, dl.zeros({2, 3}, {dtype = "float32"}).nbytes)
    assert.equal(0, dl.zeros{2, 0}.nbytes)
    assert.equal(8, dl.array(1.5).nbytes)
  end)

  it("nbytes of a view counts the view's elements, not the whole buffer", function()
    local m = dl.zeros{4, 6}
    assert.equal(3 * 8, m:slice(2, 1, -1, 2)[1].nbytes)
    assert.equal(6 * 8, m[2].nbytes)
  end)
end)

describe("a.device and a.backend", function()
  it("name the cpu backend for arrays made without a device", function()
    local a = dl.zeros{2}
    assert.equal("cpu:0", a.device)
    assert.equal("cpu", a.backend)
  end)

  it("are the same for a view as for its base", function()
    local v = dl.zeros{2, 3}:transpose()
    assert.equal("cpu:0", v.device)
    assert.equal("cpu", v.backend)
  end)
end)

describe("a.readonly", function()
  it("is false for new arrays and their ordinary views", function()
    local a = dl.zeros{2, 3}
    assert.is_false(a.readonly)
    assert.is_false(a:transpose().readonly)
    assert.is_false(a[1].readonly)
  end)

  it("is true for an expanded (broadcast) view", function()
    local e = dl.zeros{1, 3}:expand{2, 3}
    assert.is_true(e.readonly)
    assert.is_true(e[1].readonly) -- views of it are read-only too
  end)

  it("is false for copies of a read-only array", function()
    local e = dl.zeros{1, 3}:expand{2, 3}
    assert.is_false(e:copy().readonly)
    assert.is_false(e:contiguous().readonly)
  end)
end)

describe("#a", function()
  it("is the extent of the first dimension", function()
    assert.equal(3, #dl.zeros{3})
    assert.equal(2, #dl.zeros{2, 5})
    assert.equal(5, #dl.zeros{2, 5}:transpose())
    assert.equal(0, #dl.zeros{0, 5})
  end)

  it("raises SHAPE for a 0-d array, which has no first dimension", function()
    local z = dl.array(5)
    local ok, err = pcall(function() return #z end)
    assert.is_false(ok)
    assert.equal("SHAPE", err.code)
  end)
end)

describe("attribute access", function()
  it("unknown names read as nil", function()
    assert.is_nil(dl.zeros{2}.foo)
  end)

  it("attributes cannot be assigned: a.shape = ... raises ARGUMENT", function()
    local a = dl.zeros{2, 3}
    assert.equal("ARGUMENT", error_code(function() a.shape = {6} end))
    assert.equal("ARGUMENT", error_code(function() a.dtype = "int8" end))
    assert.equal("ARGUMENT", error_code(function() a.readonly = true end))
    assert.same({2, 3}, a.shape)
    assert.equal("float64", a.dtype)
    assert.is_false(a.readonly)
  end)

  it("reading an attribute of a deleted array raises DELETED", function()
    local a = dl.zeros{2}
    a:delete()
    assert.equal("DELETED", error_code(function() return a.shape end))
    assert.equal("DELETED", error_code(function() return #a end))
  end)
end)

describe("dl.is_array", function()
  it("is true for arrays and their views", function()
    local a = dl.zeros{2, 3}
    assert.is_true(dl.is_array(a))
    assert.is_true(dl.is_array(a:transpose()))
    assert.is_true(dl.is_array(a[1]))
    assert.is_true(dl.is_array(dl.array(5)))
  end)

  it("is false for anything else", function()
    assert.is_false(dl.is_array(nil))
    assert.is_false(dl.is_array(1))
    assert.is_false(dl.is_array("array"))
    assert.is_false(dl.is_array({1, 2, 3}))
    assert.is_false(dl.is_array(io.stdout))
    local _, err = pcall(dl.zeros, {-1})
    assert.is_false(dl.is_array(err))
  end)

  it("is still true for a deleted array", function()
    local a = dl.zeros{2}
    a:delete()
    assert.is_true(dl.is_array(a))
  end)
end)
