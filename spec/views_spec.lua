-- Views: new shapes over the same memory.
--
-- A view shares its base array's elements: a write through the view is seen
-- through the base and a write through the base is seen through the view.
-- Nothing is copied, except by a:reshape (when no view can describe the
-- result) and a:contiguous (when the array is not contiguous).
--
--   a:view(shape)                 new shape, never copies (-1 infers a dim)
--   a:reshape(shape)              a view when possible, a copy otherwise
--   a:transpose() / (d1, d2)      reverse all dims / swap two
--   a:permute{...}                reorder the dims
--   a:narrow(dim, start, len)     len entries of dim from start
--   a:select(dim, i)              entry i of dim, without that dim
--   a:slice(dim, first, last, step)  inclusive bounds, NumPy-style clamping
--   a:squeeze() / a:squeeze(dim)  drop extent-1 dims
--   a:unsqueeze(dim)              insert an extent-1 dim
--   a:expand(shape)               broadcast extent-1 dims (read-only, stride 0)
--   a:contiguous(), a:is_contiguous()
--
-- Dimensions are 1-based; a negative dim counts from the end (-1 is the
-- last); 0 or a dim out of range raises INDEX.
local dl = require "dlbridge"
local support = require "support"

local error_code = support.code_of

-- {1, 2, ..., n} as a float64 array of the given shape.
local function counting(shape)
  local n = 1
  for _, e in ipairs(shape) do n = n * e end
  return dl.arange(1, n + 1, {dtype = "float64"}):view(shape)
end

describe("a:view(shape)", function()
  it("gives the same elements in a new shape", function()
    local a = dl.arange(6)
    local m = a:view{2, 3}
    assert.same({2, 3}, m.shape)
    assert.same({{0, 1, 2}, {3, 4, 5}}, m:totable())
  end)

  it("shares memory with the base, both ways", function()
    local a = dl.zeros{6}
    local m = a:view{2, 3}
    m:set(2, 1, 7)    -- through the view ...
    assert.equal(7, a[4]) -- ... seen in the base
    a[6] = 9          -- through the base ...
    assert.equal(9, m:get(2, 3)) -- ... seen in the view
  end)

  it("accepts one integer for a 1-D shape", function()
    local m = dl.zeros{2, 3}
    assert.same({6}, m:view(6).shape)
  end)

  it("infers one dimension given as -1", function()
    local a = dl.arange(12)
    assert.same({3, 4}, a:view{-1, 4}.shape)
    assert.same({2, 3, 2}, a:view{2, -1, 2}.shape)
    assert.same({12}, a:view{2, 6}:view(-1).shape)
  end)

  it("raises SHAPE when the element count differs", function()
    local a = dl.arange(6)
    local ok, err = pcall(function() return a:view{4, 2} end)
    assert.is_false(ok)
    assert.equal("SHAPE", err.code)
    assert.equal("SHAPE", error_code(function() return a:view{-1, 4} end))
    assert.equal("SHAPE", error_code(function() return a:view{-1, -1} end))
  end)

  it("never copies: on a transposed array it raises COPY_REQUIRED", function()
    local t = dl.arange(6):view{2, 3}:transpose()
    assert.equal("COPY_REQUIRED", error_code(function() return t:view{6} end))
  end)

  it("works on a non-contiguous array when the layout allows it", function()
    -- every other row of a 4x3 matrix, each row still contiguous
    local rows = counting{4, 3}:slice(1, 1, -1, 2)
    local v = rows:view{2, 3, 1}
    assert.same({{{1}, {2}, {3}}, {{7}, {8}, {9}}}, v:totable())
  end)
end)

describe("a:reshape(shape)", function()
  it("is a view when the layout allows it", function()
    local a = dl.zeros{6}
    local m = a:reshape{3, 2}
    m:set(1, 2, 5)
    assert.equal(5, a[2])
    a[3] = 6
    assert.equal(6, m:get(2, 1))
  end)

  it("copies when no view can describe the result", function()
    local base = counting{2, 3}
    local flat = base:transpose():reshape{6}
    assert.same({1, 4, 2, 5, 3, 6}, flat:totable())
    -- the copy is independent of the base, both ways
    flat[1] = 100
    assert.equal(1, base:get(1, 1))
    base:set(1, 2, 200)
    assert.equal(2, flat[3])
  end)

  it("infers -1 and checks the element count like a:view", function()
    local a = dl.arange(6)
    assert.same({2, 3}, a:reshape{2, -1}.shape)
    assert.equal("SHAPE", error_code(function() return a:reshape{4} end))
  end)
end)

describe("a:transpose", function()
  it("with no arguments reverses all dims", function()
    local t = dl.zeros{2, 3, 4}:transpose()
    assert.same({4, 3, 2}, t.shape)
    local m = dl.array{{1, 2, 3}, {4, 5, 6}}
    assert.same({{1, 4}, {2, 5}, {3, 6}}, m:transpose():totable())
  end)

  it("with two dims swaps them", function()
    local t = dl.zeros{2, 3, 4}
    assert.same({4, 3, 2}, t:transpose(1, 3).shape)
    assert.same({2, 4, 3}, t:transpose(2, 3).shape)
    assert.same({3, 2, 4}, t:transpose(-3, -2).shape)
  end)

  it("shares memory with the base", function()
    local m = dl.zeros{2, 3}
    local t = m:transpose()
    t:set(3, 1, 8)
    assert.equal(8, m:get(1, 3))
    m:set(2, 1, 9)
    assert.equal(9, t:get(1, 2))
  end)

  it("of a 1-D or 0-d array is the same elements", function()
    assert.same({1, 2, 3}, dl.array{1, 2, 3}:transpose():totable())
    assert.equal(5, dl.array(5):transpose():get())
  end)

  it("raises INDEX for a dim that is 0 or out of range", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m:transpose(0, 1) end))
    assert.equal("INDEX", error_code(function() return m:transpose(1, 3) end))
    assert.equal("INDEX", error_code(function() return m:transpose(-3, 1) end))
  end)
end)

describe("a:permute{...}", function()
  it("puts dim perm[k] of a at position k", function()
    local a = dl.zeros{2, 3, 4}
    assert.same({4, 2, 3}, a:permute{3, 1, 2}.shape)
    assert.same({3, 4, 2}, a:permute{2, 3, 1}.shape)
    assert.same({4, 3, 2}, a:permute{-1, -2, -3}.shape)
  end)

  it("moves elements with their dims, sharing memory", function()
    local a = counting{2, 3, 4}
    local p = a:permute{3, 1, 2}
    assert.equal(a:get(2, 3, 4), p:get(4, 2, 3))
    assert.equal(a:get(1, 2, 3), p:get(3, 1, 2))
    p:set(1, 2, 3, -1)
    assert.equal(-1, a:get(2, 3, 1))
  end)

  it("raises INDEX for a repeated, missing or out-of-range dim", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal("INDEX", error_code(function() return a:permute{1, 1, 2} end))
    assert.equal("INDEX", error_code(function() return a:permute{1, 2} end))
    assert.equal("INDEX", error_code(function() return a:permute{1, 2, 4} end))
    assert.equal("INDEX", error_code(function() return a:permute{0, 1, 2} end))
  end)

  it("takes a table: a:permute(2, 1) raises ARGUMENT", function()
    local m = dl.zeros{2, 3}
    assert.equal("ARGUMENT", error_code(function() return m:permute(2, 1) end))
  end)
end)

describe("a:narrow(dim, start, len)", function()
  it("keeps len entries of dim from start", function()
    local a = dl.array{10, 20, 30, 40, 50}
    assert.same({20, 30, 40}, a:narrow(1, 2, 3):totable())
    assert.same({40, 50}, a:narrow(1, -2, 2):totable())
  end)

  it("narrows any dim of an n-D array", function()
    local m = counting{3, 4}
    assert.same({{2, 3}, {6, 7}, {10, 11}}, m:narrow(2, 2, 2):totable())
    assert.same({{5, 6, 7, 8}}, m:narrow(-2, 2, 1):totable())
  end)

  it("shares memory with the base", function()
    local a = dl.zeros{5}
    local n = a:narrow(1, 2, 3)
    n[1] = 7
    assert.equal(7, a[2])
    a[4] = 8
    assert.equal(8, n[3])
  end)

  it("can be empty, even just past the end", function()
    local a = dl.zeros{5}
    assert.same({0}, a:narrow(1, 3, 0).shape)
    assert.same({0}, a:narrow(1, 6, 0).shape)
  end)

  it("raises INDEX when the range runs past the end or the start is 0", function()
    local a = dl.zeros{5}
    assert.equal("INDEX", error_code(function() return a:narrow(1, 5, 2) end))
    assert.equal("INDEX", error_code(function() return a:narrow(1, 0, 1) end))
    assert.equal("INDEX", error_code(function() return a:narrow(1, 6, 1) end))
    assert.equal("INDEX", error_code(function() return a:narrow(1, 1, -1) end))
    assert.equal("INDEX", error_code(function() return a:narrow(2, 1, 1) end))
  end)
end)

describe("a:select(dim, i)", function()
  it("takes entry i of dim and drops that dim", function()
    local m = counting{2, 3}
    assert.same({4, 5, 6}, m:select(1, 2):totable())
    assert.same({3, 6}, m:select(2, -1):totable())
    assert.same({2, 4}, dl.zeros{2, 3, 4}:select(2, 1).shape)
  end)

  it("of a 1-D array is a 0-d array", function()
    local z = dl.array{10, 20, 30}:select(1, 3)
    assert.equal(0, z.ndim)
    assert.equal(30, z:get())
  end)

  it("shares memory with the base", function()
    local m = dl.zeros{2, 3}
    local col = m:select(2, 3)
    col[2] = 5
    assert.equal(5, m:get(2, 3))
    m:set(1, 3, 4)
    assert.equal(4, col[1])
  end)

  it("raises INDEX for an index or dim out of range", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m:select(1, 3) end))
    assert.equal("INDEX", error_code(function() return m:select(2, 0) end))
    assert.equal("INDEX", error_code(function() return m:select(3, 1) end))
    assert.equal("INDEX", error_code(function() return m:select(0, 1) end))
  end)
end)

describe("a:slice(dim, first, last, step)", function()
  local a = dl.array{10, 20, 30, 40, 50}

  it("has inclusive 1-based bounds", function()
    assert.same({20, 30, 40}, a:slice(1, 2, 4):totable())
    assert.same({30}, a:slice(1, 3, 3):totable())
  end)

  it("takes every step-th entry", function()
    assert.same({10, 30, 50}, a:slice(1, 1, 5, 2):totable())
    assert.same({20, 50}, a:slice(1, 2, 5, 3):totable())
    assert.same({20}, a:slice(1, 2, 4, 10):totable())
  end)

  it("counts negative bounds from the end", function()
    assert.same({40, 50}, a:slice(1, -2, -1):totable())
    assert.same({20, 30, 40}, a:slice(1, 2, -2):totable())
  end)

  it("defaults to the whole dim: first = 1, last = -1, step = 1", function()
    assert.same({10, 20, 30, 40, 50}, a:slice(1):totable())
    assert.same({30, 40, 50}, a:slice(1, 3):totable())
    assert.same({10, 20}, a:slice(1, nil, 2):totable())
    assert.same({10, 30, 50}, a:slice(1, nil, nil, 2):totable())
  end)

  it("walks backwards with a negative step: a:slice(1, -1, 1, -1) reverses", function()
    assert.same({50, 40, 30, 20, 10}, a:slice(1, -1, 1, -1):totable())
    assert.same({40, 30, 20}, a:slice(1, 4, 2, -1):totable())
    assert.same({50, 30, 10}, a:slice(1, nil, nil, -2):totable())
  end)

  it("clamps bounds beyond the ends, like NumPy", function()
    assert.same({10, 20, 30, 40, 50}, a:slice(1, -100, 100):totable())
    assert.same({40, 50}, a:slice(1, 4, 99):totable())
    assert.same({50, 30, 10}, a:slice(1, 100, -100, -2):totable())
  end)

  it("gives an empty view when the bounds select nothing", function()
    assert.same({0}, a:slice(1, 4, 2).shape)        -- last before first
    assert.same({0}, a:slice(1, 2, 4, -1).shape)    -- backwards, but first before last
    assert.same({0}, a:slice(1, 10, 20).shape)      -- entirely past the end
    assert.same({0}, a:slice(1, -100, -50).shape)   -- entirely before the start
    assert.same({0}, dl.zeros{0}:slice(1).shape)
    assert.same({0}, dl.zeros{0}:slice(1, nil, nil, -1).shape)
    assert.same({2, 0}, dl.zeros{2, 3}:slice(2, 3, 1).shape)
  end)

  it("slices any dim of an n-D array", function()
    local m = counting{3, 4}
    assert.same({{2, 4}, {6, 8}, {10, 12}}, m:slice(2, 2, 4, 2):totable())
    assert.same({{9, 10, 11, 12}, {1, 2, 3, 4}}, m:slice(-2, -1, 1, -2):totable())
  end)

  it("shares memory with the base, even when walking backwards", function()
    local b = dl.zeros{5}
    local r = b:slice(1, -1, 1, -1)
    r[1] = 5
    assert.equal(5, b[5])
    b[1] = 1
    assert.equal(1, r[5])
    local odd = b:slice(1, 1, 5, 2)
    odd:fill(9)
    assert.same({9, 0, 9, 0, 9}, b:totable())
  end)

  it("gives a view with multiplied strides", function()
    assert.same({2}, a:slice(1, 1, 5, 2).strides)
    assert.same({-1}, a:slice(1, -1, 1, -1).strides)
  end)

  it("raises ARGUMENT for step 0 and INDEX for a bound 0", function()
    local ok, err = pcall(function() return a:slice(1, 1, 5, 0) end)
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.equal("INDEX", error_code(function() return a:slice(1, 0, 3) end))
    assert.equal("INDEX", error_code(function() return a:slice(1, 1, 0) end))
  end)

  it("raises INDEX for a bound with a fraction, ARGUMENT for a step with one", function()
    assert.equal("INDEX", error_code(function() return a:slice(1, 1.5, 3) end))
    assert.equal("ARGUMENT", error_code(function() return a:slice(1, 1, 3, 1.5) end))
    assert.equal("ARGUMENT", error_code(function() return a:slice(1, "1", 3) end))
  end)

  it("raises INDEX for a dim 0 or out of range", function()
    assert.equal("INDEX", error_code(function() return a:slice(0) end))
    assert.equal("INDEX", error_code(function() return a:slice(2) end))
  end)
end)

describe("a:squeeze", function()
  it("with no argument drops every extent-1 dim", function()
    assert.same({3}, dl.zeros{1, 3, 1}:squeeze().shape)
    assert.same({2, 3}, dl.zeros{2, 3}:squeeze().shape)
    assert.same({}, dl.zeros{1, 1}:squeeze().shape)
  end)

  it("with a dim drops only that dim", function()
    local a = dl.zeros{1, 3, 1}
    assert.same({3, 1}, a:squeeze(1).shape)
    assert.same({1, 3}, a:squeeze(-1).shape)
  end)

  it("raises SHAPE for a dim whose extent is not 1", function()
    local a = dl.zeros{1, 3, 1}
    local ok, err = pcall(function() return a:squeeze(2) end)
    assert.is_false(ok)
    assert.equal("SHAPE", err.code)
  end)

  it("raises INDEX for a dim 0 or out of range", function()
    local a = dl.zeros{1, 3, 1}
    assert.equal("INDEX", error_code(function() return a:squeeze(0) end))
    assert.equal("INDEX", error_code(function() return a:squeeze(4) end))
  end)

  it("shares memory with the base", function()
    local a = dl.zeros{1, 3}
    local s = a:squeeze()
    s[2] = 4
    assert.equal(4, a:get(1, 2))
  end)
end)

describe("a:unsqueeze(dim)", function()
  it("inserts an extent-1 dim at position dim (1 .. ndim+1)", function()
    local m = dl.zeros{2, 3}
    assert.same({1, 2, 3}, m:unsqueeze(1).shape)
    assert.same({2, 1, 3}, m:unsqueeze(2).shape)
    assert.same({2, 3, 1}, m:unsqueeze(3).shape)
  end)

  it("appends with -1", function()
    assert.same({2, 3, 1}, dl.zeros{2, 3}:unsqueeze(-1).shape)
    assert.same({3, 1}, dl.zeros{3}:unsqueeze(-1).shape)
  end)

  it("raises INDEX for a position 0 or beyond ndim+1", function()
    local m = dl.zeros{2, 3}
    assert.equal("INDEX", error_code(function() return m:unsqueeze(0) end))
    assert.equal("INDEX", error_code(function() return m:unsqueeze(4) end))
    assert.equal("INDEX", error_code(function() return m:unsqueeze(-4) end))
  end)

  it("shares memory and keeps a contiguous array contiguous", function()
    local a = dl.zeros{3}
    local u = a:unsqueeze(1)
    assert.is_true(u:is_contiguous())
    u:set(1, 3, 2)
    assert.equal(2, a[3])
  end)
end)

describe("a:expand(shape)", function()
  it("broadcasts extent-1 dims with stride 0", function()
    local col = dl.array{{1}, {2}}
    local e = col:expand{2, 3}
    assert.same({2, 3}, e.shape)
    assert.same({1, 0}, e.strides)
    assert.same({{1, 1, 1}, {2, 2, 2}}, e:totable())
  end)

  it("keeps a dim given as -1", function()
    assert.same({2, 4}, dl.zeros{2, 1}:expand{-1, 4}.shape)
  end)

  it("adds new leading dims", function()
    local e = dl.array{1, 2, 3}:expand{2, 3}
    assert.same({{1, 2, 3}, {1, 2, 3}}, e:totable())
    assert.same({0, 1}, e.strides)
    assert.same({4, 2, 3}, dl.zeros{1, 3}:expand{4, 2, 3}.shape)
  end)

  it("sees later writes to the base", function()
    local base = dl.zeros{1, 3}
    local e = base:expand{4, 3}
    base:set(1, 2, 7)
    assert.equal(7, e:get(4, 2))
  end)

  it("gives a read-only view: writes raise READ_ONLY", function()
    local e = dl.zeros{1, 3}:expand{2, 3}
    assert.is_true(e.readonly)
    local ok, err = pcall(function() e:set(1, 1, 5) end)
    assert.is_false(ok)
    assert.equal("READ_ONLY", err.code)
    assert.equal("READ_ONLY", error_code(function() e:fill(1) end))
    assert.equal("READ_ONLY", error_code(function() e[1] = 1 end))
    assert.equal("READ_ONLY", error_code(function() e:copy_from{1, 2, 3} end))
  end)

  it("a copy of an expanded view is writable", function()
    local e = dl.zeros{1, 3}:expand{2, 3}
    local c = e:contiguous()
    assert.is_false(c.readonly)
    c:set(1, 1, 5)
    assert.same({{5, 0, 0}, {0, 0, 0}}, c:totable())
  end)

  it("raises SHAPE when a dim other than 1 differs, or dims would be dropped", function()
    local m = dl.zeros{2, 3}
    assert.equal("SHAPE", error_code(function() return m:expand{4, 3} end))
    assert.equal("SHAPE", error_code(function() return m:expand{2, 4} end))
    assert.equal("SHAPE", error_code(function() return m:expand{3} end))
    assert.equal("SHAPE", error_code(function() return m:expand{-1, 2, 3} end))
  end)
end)

describe("a:contiguous and a:is_contiguous", function()
  it("a new array is contiguous", function()
    assert.is_true(dl.zeros{2, 3}:is_contiguous())
  end)

  it("a transposed or stepped view is not", function()
    assert.is_false(dl.zeros{2, 3}:transpose():is_contiguous())
    assert.is_false(dl.zeros{6}:slice(1, 1, 6, 2):is_contiguous())
    assert.is_false(dl.zeros{3, 4}:narrow(2, 1, 2):is_contiguous())
  end)

  it("a block of whole rows is", function()
    assert.is_true(dl.zeros{3, 4}:narrow(1, 2, 2):is_contiguous())
  end)

  it("extent-1 dims and size-0 arrays do not break contiguity", function()
    assert.is_true(dl.zeros{3, 1}:transpose():is_contiguous())
    assert.is_true(dl.zeros{1, 4}:expand{1, 4}:is_contiguous())
    assert.is_true(dl.zeros{0, 3}:transpose():is_contiguous())
    assert.is_true(dl.zeros{6}:slice(1, 2, 2):is_contiguous())
  end)

  it("a:contiguous() returns the same object when already contiguous", function()
    local a = dl.zeros{2, 3}
    assert.is_true(rawequal(a, a:contiguous()))
  end)

  it("a:contiguous() copies otherwise, into a new, independent array", function()
    local m = counting{2, 3}
    local t = m:transpose()
    local c = t:contiguous()
    assert.is_false(rawequal(t, c))
    assert.is_true(c:is_contiguous())
    assert.same(t:totable(), c:totable())
    c:set(1, 1, 100)
    assert.equal(1, m:get(1, 1))
  end)
end)

describe("views of size-0 arrays", function()
  -- A size-0 array reaches no memory, so its other extents may be as large
  -- as an int64 allows (math.maxinteger on Lua 5.3 and later:
  -- spec/lua53/views_spec.lua; 2^53 here, the most that Lua 5.1, 5.2 and
  -- LuaJIT read back); every view of it is size-0 too.
  it("can be indexed, sliced and selected anywhere along their other dims", function()
    local a = dl.zeros{2 ^ 53, 0}
    assert.same({0}, a[-3].shape)
    assert.same({0}, a[2 ^ 53].shape)
    assert.same({0}, a:select(1, -1).shape)
    assert.same({3, 0}, a:slice(1, -3, -1).shape)
    assert.same({2, 0}, a:slice(1, -1, 1, -2 ^ 52).shape)  -- the last row and the middle one
    assert.same({0, 2 ^ 53}, a:transpose().shape)
    assert.same({}, a[5]:totable())
  end)

  it("copy, export and import like any other array", function()
    local a = dl.zeros{2 ^ 53, 0}
    local v = a[-2]
    assert.same({0}, v:copy().shape)
    assert.same({0}, dl.from_dlpack(v:to_dlpack()).shape)
    assert.same({2 ^ 53, 0}, dl.from_dlpack(a).shape)
  end)
end)

describe("dimension arguments", function()
  it("are 1-based and negative from the end", function()
    local a = dl.zeros{2, 3, 4}
    assert.same({3, 4}, a:select(1, 1).shape)
    assert.same({2, 3}, a:select(-1, 1).shape)
    assert.same({2, 4}, a:select(-2, 1).shape)
  end)

  it("raise INDEX when 0 or out of range", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal("INDEX", error_code(function() return a:select(0, 1) end))
    assert.equal("INDEX", error_code(function() return a:select(4, 1) end))
    assert.equal("INDEX", error_code(function() return a:select(-4, 1) end))
    assert.equal("INDEX", error_code(function() return a:narrow(1.5, 1, 1) end))
  end)

  it("raise ARGUMENT when not a number", function()
    local a = dl.zeros{2, 3, 4}
    assert.equal("ARGUMENT", error_code(function() return a:select("1", 1) end))
  end)
end)

describe("views and lifetime", function()
  it("a view keeps the memory alive after the base is deleted", function()
    local base = dl.array{1, 2, 3, 4}
    local v = base:view{2, 2}
    base:delete()
    assert.same({{1, 2}, {3, 4}}, v:totable())
    v:set(2, 2, 40)
    assert.equal(40, v:get(2, 2))
  end)

  it("a view survives its base being collected", function()
    local v
    do
      local base = dl.array{1, 2, 3, 4}
      v = base:slice(1, -1, 1, -1)
    end
    collectgarbage()
    collectgarbage()
    assert.same({4, 3, 2, 1}, v:totable())
  end)

  it("views of views share the same memory", function()
    local base = dl.zeros{4, 4}
    local inner = base:narrow(1, 2, 2):narrow(2, 2, 2):transpose()
    inner:set(2, 1, 3)
    assert.equal(3, base:get(2, 3))
  end)

  it("a deleted base gives DELETED for new views, not for existing ones", function()
    local base = dl.zeros{4}
    local v = base:view{2, 2}
    base:delete()
    assert.equal("DELETED", error_code(function() return base:view{4} end))
    assert.same({2, 2}, v.shape)
  end)
end)
