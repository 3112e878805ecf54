-- dlpack_foreign_spec.lua -- what dl.from_dlpack makes of another producer's tensor.
--
-- A producer (PyTorch, NumPy, an engine) chooses its tensor's geometry. After
-- validating it (dlpack_import_spec.lua), dlbridge takes three more steps so
-- that the array behaves like one of its own:
--
-- * Overlap makes it read-only. When two indices reach one element (a
--   broadcast dim: stride 0 with extent > 1, or strides such as {1, 1} on
--   shape {2, 2}), a write through one index would change the others, so
--   the array is read-only, like dlbridge's own a:expand views: writes raise
--   READ_ONLY. The test is a cheap sufficient one: take the dims of extent > 1
--   in order of |stride|; when each |stride| is larger than the span of all the
--   smaller ones (the sum of |stride| * (extent - 1)), no two indices meet.
--   A tensor that fails it counts as overlapping even in the rare case where
--   no element is shared (shape {3, 2}, strides {2, 3}); opts.copy = true
--   gives a writable copy of any of them.
-- * Strides that reach no element are made harmless. The stride of an
--   extent-1 dim, and every stride of a size-0 tensor, carries no meaning:
--   a producer may send anything there (PyTorch's as_strided allows
--   2^62). dlbridge replaces them with the strides a compact row-major
--   layout would have, so that nothing computes with a stride it never
--   needs (the products of huge ones overflow) and row-major tensors stay
--   row-major. dlbridge's own exports taken back keep their strides exactly.
-- * byte_offset is honoured to the byte, even when it leaves the data
--   misaligned for its dtype: the array reads it as it is.
--
-- In these specs the test module dlpack_producer (tests/producer/) is the
-- other library: P.capsule{...} builds a tensor of any geometry over memory of
-- its own; P.consume(capsule) takes a tensor as a C consumer would.
local dl = require "dlbridge"
local support = require "support"
local P = require "dlpack_producer"

local code_of = support.code_of

-- A producer's tensor: P.capsule with the values 1, 2, ..., n unless given.
local function foreign(spec)
  if not spec.values then
    local n = 1
    for _, e in ipairs(spec.shape) do n = n * e end
    spec.values = {}
    for k = 1, n do spec.values[k] = k end
  end
  spec.dtype = spec.dtype or "float64"
  return dl.from_dlpack(P.capsule(spec))
end

describe("a producer's tensor whose elements overlap", function()
  it("a broadcast dim (stride 0) imports read-only", function()
    -- PyTorch's torch.arange(3.).expand(4, 3) has these strides
    local b = foreign{shape = {4, 3}, strides = {0, 1}, values = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}}
    assert.is_true(b.readonly)
    assert.equal("READ_ONLY", code_of(b.set, b, 1, 1, 99))
    assert.equal("READ_ONLY", code_of(b.fill, b, 0))
    assert.same({1, 2, 3}, b[4]:totable())
    assert.equal(24, b:sum())        -- reading is fine
  end)

  it("strides that make two indices meet import read-only", function()
    -- element (i, j) at offset (i - 1) + (j - 1): (1, 2) and (2, 1) are one element
    local b = foreign{shape = {2, 2}, strides = {1, 1}, values = {10, 11, 11, 12}}
    assert.is_true(b.readonly)
    assert.same({{10, 11}, {11, 12}}, b:totable())
  end)

  it("counts as overlapping when the sufficient test fails, even without a shared element", function()
    -- offsets 0, 3, 2, 5, 4, 7: all distinct, but 3 < 2 * (3 - 1) + 1
    local b = foreign{shape = {3, 2}, strides = {2, 3}}
    assert.is_true(b.readonly)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, b:totable())
  end)

  it("opts.copy = true gives a writable copy", function()
    local b = dl.from_dlpack(P.capsule{dtype = "float64", shape = {3, 2}, strides = {0, 1},
                                        values = {1, 2, 1, 2, 1, 2}}, {copy = true})
    assert.is_false(b.readonly)
    b:set(1, 1, 99)
    assert.same({{99, 2}, {1, 2}, {1, 2}}, b:totable())
  end)

  it("legacy tensors too", function()
    local b = foreign{shape = {2, 3}, strides = {0, 1}, values = {1, 2, 3, 1, 2, 3}, legacy = true}
    assert.is_true(b.readonly)
  end)

  it("tensors without overlap stay writable, whatever their strides", function()
    local cases = {
      {shape = {2, 3}, strides = {3, 1}},          -- row-major
      {shape = {2, 3}, strides = {1, 2}},          -- column-major
      {shape = {2, 2}, strides = {-2, 1}},         -- rows reversed
      {shape = {3, 2}, strides = {4, 1}},          -- padded rows
      {shape = {2, 1, 3}, strides = {3, 0, 1}},    -- stride 0 on an extent-1 dim reaches one element
      {shape = {4}, strides = {0}, values = {1, 1, 1, 1}, expect = true},  -- but not on extent 4
    }
    for _, c in ipairs(cases) do
      local b = foreign(c)
      assert.equal(c.expect or false, b.readonly, table.concat(c.strides, ","))
    end
  end)

  it("a READ_ONLY tensor stays read-only without overlap", function()
    assert.is_true(foreign{shape = {3}, strides = {1}, readonly = true}.readonly)
  end)
end)

describe("strides that reach no element", function()
  -- (math.maxinteger and math.mininteger as strides, Lua 5.3 and later: spec/lua53)
  it("of extent-1 dims become the compact row-major ones", function()
    local b = foreign{shape = {1, 3}, strides = {2 ^ 62, 1}}
    assert.same({3, 1}, b.strides)
    b = foreign{shape = {3, 1}, strides = {1, -2 ^ 63}}
    assert.same({1, 1}, b.strides)
    b = foreign{shape = {2, 1, 2}, strides = {1, -2 ^ 62, 2}}  -- column-major around it
    assert.same({1, 2, 2}, b.strides)
    assert.same({{{1, 2}}, {{3, 4}}}, b:totable())
  end)

  it("so that computing on such a tensor works", function()
    local b = foreign{shape = {1, 3}, strides = {2 ^ 62, 1}, values = {1, 2, 3}}
    assert.equal(6, b:sum())
    assert.same({6}, b:sum{dim = 2}:totable())
    assert.same({1, 2, 3}, b:max{dim = 1}:totable())
    assert.same({{2, 3, 4}}, (b + 1):totable())
    assert.same({{14}}, b:matmul(b:T()):totable())
    assert.same({{1, 2, 3}, {2, 4, 6}, {3, 6, 9}}, b:T():matmul(b):totable())
    assert.same({{1, 2, 3}}, b:contiguous():totable())
  end)

  it("of a size-0 tensor are all compact row-major", function()
    local b = foreign{shape = {0, 3}, strides = {2 ^ 62, -2 ^ 63}, values = {}}
    assert.same({3, 1}, b.strides)
    assert.equal(0, b:sum())
    assert.same({0}, (b + 1):sum{dim = 2}.shape)
    assert.same({0, 2}, b:matmul(dl.ones{3, 2}).shape)
    assert.same({{0, 0}, {0, 0}, {0, 0}}, b:T():matmul(dl.ones{0, 2}):totable())  -- inner dim 0
  end)

  it("of dlbridge's own exports taken back stay exactly as they were", function()
    local v = dl.arange(12):view{3, 4}:T():slice(1, 2, 2)   -- shape {1, 3}, strides {1, 4}
    assert.same({1, 4}, v.strides)
    assert.same({1, 4}, dl.from_dlpack(v:to_dlpack()).strides)
    assert.same({1, 4}, dl.from_dlpack(v:to_dlpack{max_version = {0, 8}}).strides)
    assert.same({1, 4}, dl.from_dlpack(v).strides)
  end)
end)

describe("data misaligned for its dtype (byte_offset 3 on float64)", function()
  local values = {1.5, -2.25, 7.75, 7.75, 0.125, -9.5}

  -- The oracle, in plain Lua.
  local function lua_sum(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end
  local function lua_argmax(t)
    local k = 1
    for i, v in ipairs(t) do if v > t[k] then k = i end end
    return k
  end

  it("reads its elements as they are", function()
    local x = foreign{shape = {6}, strides = {1}, byte_offset = 3, values = values}
    assert.same(values, x:totable())
    assert.same(values, x:copy():totable())
  end)

  it("reduces to the values computed in Lua", function()
    local x = foreign{shape = {6}, strides = {1}, byte_offset = 3, values = values}
    assert.equal(lua_sum(values), x:sum())
    assert.equal(7.75, x:max())
    assert.equal(-9.5, x:min())
    assert.equal(lua_argmax(values), x:argmax())
    assert.equal(lua_sum(values) / #values, x:mean())
  end)

  it("reduces along a dim too", function()
    local x = foreign{shape = {2, 3}, strides = {3, 1}, byte_offset = 3, values = values}
    assert.same({values[1] + values[4], values[2] + values[5], values[3] + values[6]},
                x:sum{dim = 1}:totable())
    assert.same({lua_sum{values[1], values[2], values[3]} / 3, lua_sum{values[4], values[5], values[6]} / 3},
                x:mean{dim = 2}:totable())
    assert.same({3, 1}, x:argmax{dim = 2}:totable())
    assert.same({7.75, 7.75}, x:max{dim = 2}:totable())
  end)
end)

describe("a dlbridge export consumed from C", function()
  it("points a size-0 tensor at non-NULL, 64-byte aligned memory (any ABI, views, copies)", function()
    -- LibTorch 1.13 never calls the deleter of a tensor whose data is NULL
    local base = dl.arange(6, {dtype = "float32"})
    local arrays = {dl.zeros{0}, dl.zeros({0, 3}, {dtype = "int8"}), base:slice(1, 4, 3),
                    base:view{2, 3}:slice(2, 2, 3, -1):T()}
    for i, a in ipairs(arrays) do
      assert.equal(0, a.size)
      for _, opts in ipairs{{}, {max_version = {0, 8}}, {copy = true}, {max_version = {0, 8}, copy = true}} do
        local t = P.consume(a:to_dlpack(opts))
        assert.is_false(t.data_null, i)
        assert.is_true(t.data_align >= 64, i)
        assert.equal(0, t.byte_offset)
        assert.same(a.shape, t.shape)
      end
    end
  end)

  it("gives a non-empty tensor's data as it is", function()
    local t = P.consume(dl.arange(4, {dtype = "float64"}):slice(1, 2):to_dlpack())
    assert.is_false(t.data_null)
    assert.equal(8, t.data_align)   -- element 2 of a 64-byte aligned buffer
  end)
end)

describe("the producer's deleter", function()
  it("runs once per tensor, when the last array over it is gone", function()
    collectgarbage()   -- the garbage of earlier specs
    local before = P.deletes()
    local b = foreign{shape = {4, 3}, strides = {0, 1}, values = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}}
    local row = b[2]
    b:delete()
    collectgarbage()
    assert.equal(before, P.deletes())
    row:delete()
    assert.equal(before + 1, P.deletes())
  end)
end)
