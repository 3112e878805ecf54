-- Vector math: cross products, outer products, norms, einsum and interpolation,
-- as NumPy 1.24 computes them.
--
-- This file documents:
--   dl.cross(a, b)              cross products along the last dim (3 or 2 long);
--                               the dims before it broadcast
--   dl.outer(a, b)              a and b flattened: result[i][j] = a[i] * b[j]
--   dl.norm(a, opts)            np.linalg.norm; opts {ord =, dim =, keepdims =}
--                               ord: a number (math.huge, -math.huge for +-inf),
--                               "fro" or "nuc"; dim: one dim (vector norms) or
--                               two (matrix norms)
--   dl.einsum(subscripts, ...)  np.einsum over one or more arrays
--   dl.interp(x, xp, fp, opts)  np.interp; opts {left =, right =, period =}
--
-- A result with no dims (a norm of everything, a full contraction, interp of
-- one number) is a Lua value, as NumPy returns a scalar.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

local function near(expected, actual, tol)
  assert.is_true(math.abs(expected - actual) <= (tol or 1e-12),
    string.format("expected %.17g, got %.17g", expected, actual))
end

local function near_all(expected, actual, tol)
  local got = actual:flatten():totable()
  assert.equal(#expected, #got)
  for k = 1, #expected do near(expected[k], got[k], tol) end
end

describe("dl.cross", function()
  it("gives the normals of triangles from two edges each", function()
    -- two triangles, their corners p0, p1, p2 as rows of (2, 3) arrays
    local p0 = dl.array{{0, 0, 0}, {0, 0, 0}}
    local p1 = dl.array{{1, 0, 0}, {0, 1, 0}}
    local p2 = dl.array{{0, 1, 0}, {0, 0, 1}}
    local normals = dl.cross(p1 - p0, p2 - p0)
    assert.same({{0, 0, 1}, {1, 0, 0}}, normals:totable())
    -- unit normals: divide by their lengths, kept as a (2, 1) column
    local unit = normals / dl.norm(normals, {dim = 2, keepdims = true})
    assert.same({2, 3}, unit.shape)
  end)

  it("broadcasts the dims before the vectors (one vector against many)", function()
    local up = dl.array{0, 0, 1}
    local c = dl.cross(dl.array{{1, 0, 0}, {0, 1, 0}}, up)
    assert.same({{0, -1, 0}, {1, 0, 0}}, c:totable())
  end)

  it("takes 2-vectors as NumPy does: two of them give the z component alone", function()
    assert.equal(-2, dl.cross({1, 2}, {3, 4}))            -- 1 * 4 - 2 * 3, a number
    assert.same({10, -5, -2}, dl.cross({1, 2}, {3, 4, 5}):totable()) -- z = 0 for the 2-vector
  end)

  it("gives the promotion of the operands' dtypes", function()
    local a = dl.array({1, 2, 3}, {dtype = "int32"})
    local b = dl.array({4, 5, 6}, {dtype = "float32"})
    assert.equal("float64", dl.cross(a, b).dtype)             -- int32 with float32: float64
    assert.equal("int32", dl.cross(a, a).dtype)
  end)

  it("refuses vectors that are not 2 or 3 long (SHAPE) and booleans (DTYPE)", function()
    expect_code("SHAPE", function() dl.cross(dl.ones(4), dl.ones(3)) end)
    expect_code("SHAPE", function() dl.cross(dl.array(1), dl.ones(3)) end)
    expect_code("DTYPE", function()
      dl.cross(dl.array({true, false, true}), dl.array({false, true, true}))
    end)
  end)
end)

describe("dl.outer", function()
  it("multiplies every element of a by every element of b", function()
    local table_of = dl.outer(dl.arange(1, 4), dl.arange(1, 3))  -- 1..3 times 1..2
    assert.same({{1, 2}, {2, 4}, {3, 6}}, table_of:totable())
  end)

  it("flattens its operands first", function()
    assert.same({4, 2}, dl.outer(dl.ones(2, 2), dl.ones(2)).shape)
  end)
end)

describe("dl.norm", function()
  it("gives distances between points (the 2-norm along a dim)", function()
    local points = dl.array{{0, 0}, {3, 4}, {6, 8}}
    local from = dl.array{0, 0}
    local d = dl.norm(points - from, {dim = 2})
    assert.same({0, 5, 10}, d:totable())
    assert.equal("float64", d.dtype) -- integers compute in float64
  end)

  it("gives the 2-norm of every element together without options (a number)", function()
    near(5, dl.norm(dl.array{3, 4}))
    near(math.sqrt(30), dl.norm(dl.array{{1, 2}, {3, 4}})) -- Frobenius for a matrix
  end)

  it("takes vector orders: 1, math.huge, -math.huge, 0 and any p", function()
    local v = dl.array{3, -4, 0}
    near(7, dl.norm(v, {ord = 1}))
    near(4, dl.norm(v, {ord = math.huge}))
    near(0, dl.norm(v, {ord = -math.huge}))
    near(2, dl.norm(v, {ord = 0}))           -- the count of nonzeros
    near((27 + 64) ^ (1 / 3), dl.norm(v, {ord = 3}))
  end)

  it("takes matrix orders over two dims: 'fro', 'nuc', 1, -1, inf, -inf, 2, -2", function()
    local m = dl.array{{1, -2}, {3, 4}}
    near(6, dl.norm(m, {ord = 1}))           -- the largest column sum of |m|
    near(7, dl.norm(m, {ord = math.huge}))   -- the largest row sum
    near(4, dl.norm(m, {ord = -1}))           -- the smallest column sum
    near(math.sqrt(30), dl.norm(m, {ord = "fro"}))
    local s = dl.linalg.svd(m, {compute_uv = false}):totable()
    near(s[1], dl.norm(m, {ord = 2}), 1e-12)
    near(s[2], dl.norm(m, {ord = -2}), 1e-12)
    near(s[1] + s[2], dl.norm(m, {ord = "nuc"}), 1e-12)
  end)

  it("raises LINALG for the 2, -2 and 'nuc' norms of a matrix holding NaN or inf", function()
    -- they take an SVD (NumPy raises LinAlgError for NaN); the other orders give NaN or inf
    local m = dl.array{{1, 0 / 0}, {3, 4}}
    expect_code("LINALG", dl.norm, m, {ord = 2})
    expect_code("LINALG", dl.norm, dl.array{{1, math.huge}, {3, 4}}, {ord = "nuc"})
    assert.is_true(dl.norm(m, {ord = "fro"}) ~= dl.norm(m, {ord = "fro"})) -- NaN
  end)

  it("works through a stack of matrices given the two dims, keeping them if asked", function()
    local stack = dl.stack({dl.eye(2), dl.eye(2) * 2}, 1) -- (2, 2, 2)
    local n = dl.norm(stack, {dim = {2, 3}, ord = "fro", keepdims = true})
    assert.same({2, 1, 1}, n.shape)
    near_all({math.sqrt(2), math.sqrt(8)}, n)
  end)

  it("keeps float32 as float32", function()
    local v = dl.array({3, 4}, {dtype = "float32"})
    assert.equal("float32", dl.norm(v, {dim = 1, keepdims = true}).dtype)
  end)

  it("refuses orders that do not fit the dims (VALUE)", function()
    expect_code("VALUE", function() dl.norm(dl.ones(3), {ord = "fro"}) end)
    expect_code("VALUE", function() dl.norm(dl.ones(2, 2), {ord = 3}) end)
    expect_code("VALUE", function() dl.norm(dl.ones(2, 2, 2), {ord = 1}) end)
    expect_code("VALUE", function() dl.norm(dl.ones(2, 2), {dim = {1, 1}}) end)
    expect_code("VALUE", function() dl.norm(dl.ones(2, 2), {ord = "max"}) end)
    expect_code("INDEX", function() dl.norm(dl.ones(2, 2), {dim = 3}) end)
  end)
end)

describe("dl.einsum", function()
  it("computes attention scores: queries against keys, batch by batch", function()
    local q = dl.arange(2 * 3 * 4):reshape(2, 3, 4) / 10   -- (batch, queries, features)
    local k = dl.ones(2, 5, 4)                               -- (batch, keys, features)
    local scores = dl.einsum("bqd,bkd->bqk", q, k)
    assert.same({2, 3, 5}, scores.shape)
    near_all(dl.matmul(q, k:transpose(2, 3)):flatten():totable(), scores)
  end)

  it("spells products and sums with letters", function()
    local a = dl.array{{1, 2}, {3, 4}}
    local b = dl.array{{5, 6}, {7, 8}}
    assert.same(dl.matmul(a, b):totable(), dl.einsum("ij,jk->ik", a, b):totable())
    assert.equal(1 * 5 + 2 * 6 + 3 * 7 + 4 * 8, dl.einsum("ij,ij->", a, b))
    assert.same({1 + 2, 3 + 4}, dl.einsum("ij->i", a):totable())
    assert.equal(1 + 4, dl.einsum("ii->", a))                 -- the trace
    assert.same({1, 4}, dl.einsum("ii->i", a):totable())      -- the diagonal
    assert.same({{1, 3}, {2, 4}}, dl.einsum("ij->ji", a):totable())
    assert.equal(10, dl.einsum("ij->", a))
    assert.same({17, 53}, dl.einsum("bi,bi->b", a, b):totable()) -- row-wise dot products
    assert.equal(14, dl.einsum("i,i->", dl.array{1, 2, 3}, dl.array{1, 2, 3}))
  end)

  it("lists the output letters in alphabetical order without '->' (NumPy's implicit mode)", function()
    local a, b = dl.ones(2, 3), dl.ones(3, 4)
    assert.same({2, 4}, dl.einsum("ij,jk", a, b).shape)
    assert.same({2, 4}, dl.einsum("kj,ji", b:T(), a:T()).shape) -- "ik": i before k
  end)

  it("gives a view for a transpose or a diagonal, as NumPy does", function()
    local a = dl.zeros(2, 2)
    dl.einsum("ii->i", a):fill(1)
    assert.same({{1, 0}, {0, 1}}, a:totable())
  end)

  it("stands '...' for the dims the letters leave, broadcast as NumPy's", function()
    local stack = dl.ones(5, 2, 3)                       -- a stack of (2, 3) matrices
    assert.same({5, 2, 4}, dl.einsum("...ij,...jk->...ik", stack, dl.ones(3, 4)).shape)
    assert.same({5, 3, 2}, dl.einsum("...ij->...ji", stack).shape)
    assert.same({3, 2}, dl.einsum("i...", dl.ones(2, 3)).shape) -- implicit: "..." first
  end)

  it("broadcasts extents of 1 and combines three operands from the left", function()
    assert.equal(6 * 2, dl.einsum("i,i", dl.array{1, 2, 3}, dl.array{2}))
    local x = dl.einsum("ij,jk,kl->il", dl.eye(2), dl.eye(2) * 2, dl.ones(2, 3))
    assert.same({{2, 2, 2}, {2, 2, 2}}, x:totable())
  end)

  it("types the result as np.einsum does: numbers beside arrays count by their values", function()
    local small = dl.array({1, 2, 3}, {dtype = "int8"})
    assert.equal("int8", dl.einsum(",i->i", 2, small).dtype)        -- 2 fits int8
    assert.equal("int16", dl.einsum(",i->i", 300, small).dtype)     -- 300 does not
    assert.equal("float64", dl.einsum(",i->i", 0.5, small).dtype)   -- a float beside integers
    -- an array that cannot be cast safely to that dtype is refused, as NumPy refuses it
    local u16 = dl.array({1, 2, 3}, {dtype = "uint16"})
    local i16 = dl.array({1, 2, 3}, {dtype = "int16"})
    expect_code("DTYPE", function() dl.einsum(",i,i->i", 1, u16, i16) end)
  end)

  it("refuses bad subscripts (VALUE) and shapes that do not fit them (SHAPE)", function()
    local a = dl.ones(2, 3)
    expect_code("VALUE", function() dl.einsum("ij->ii", a) end)       -- an output letter twice
    expect_code("VALUE", function() dl.einsum("ij->k", a) end)        -- one no input has
    expect_code("VALUE", function() dl.einsum("i1", a) end)           -- not a letter
    expect_code("VALUE", function() dl.einsum("ij,jk", a) end)        -- one operand, two terms
    expect_code("VALUE", function() dl.einsum("..i", a) end)          -- an ellipsis is "..."
    expect_code("SHAPE", function() dl.einsum("...i->i", a) end)      -- "..." in, not out
    expect_code("VALUE", function() dl.einsum("ij\0->", a) end)      -- nothing is ignored
    expect_code("SHAPE", function() dl.einsum("i", a) end)            -- a has 2 dims
    expect_code("SHAPE", function() dl.einsum("ii", a) end)           -- 2 and 3 for i
    expect_code("SHAPE", function() dl.einsum("ij,jk", a, dl.ones(2, 2)) end)
    expect_code("ARGUMENT", function() dl.einsum(a, a) end)
  end)

  it("refuses a product of more than 32 dims (SHAPE), as arrays have at most 32", function()
    local twenty = {}
    for d = 1, 20 do twenty[d] = 1 end
    local x = dl.ones(twenty)                            -- 20 dims of extent 1
    expect_code("SHAPE", function()
      dl.einsum("abcdefghijklmnopqrst,ABCDEFGHIJKLMNOPQRST", x, x)  -- an outer product: 40 dims
    end)
  end)
end)

describe("dl.interp", function()
  it("samples an animation curve given by keyframes", function()
    local times = dl.array{0, 1, 3}       -- keyframe times, increasing
    local heights = dl.array{0, 10, 4}    -- the value at each keyframe
    local frames = dl.linspace(0, 3, 7)   -- 0, 0.5, ..., 3
    near_all({0, 5, 10, 8.5, 7, 5.5, 4}, dl.interp(frames, times, heights))
  end)

  it("holds the end values outside the keyframes, or takes left and right", function()
    local xp, fp = dl.array{0, 1}, dl.array{10, 20}
    assert.same({10, 20}, dl.interp(dl.array{-1, 2}, xp, fp):totable())
    assert.same({-1, 99}, dl.interp(dl.array{-1, 2}, xp, fp, {left = -1, right = 99}):totable())
    assert.equal(15, dl.interp(0.5, xp, fp)) -- a number for a number
  end)

  it("wraps around with a period (angles, looping animations)", function()
    local r = dl.interp(dl.array{-1, 7}, dl.array{0, 1, 2, 3}, dl.array{0, 10, 20, 30},
      {period = 4})
    assert.same({30, 30}, r:totable())     -- -1 and 7 are 3 modulo 4
  end)

  it("gives NaN for NaN and float64 whatever the inputs", function()
    local r = dl.interp(dl.array({0 / 0, 1}, {dtype = "float32"}), {0, 2}, {0, 4})
    assert.equal("float64", r.dtype)
    local t = r:totable()
    assert.is_true(t[1] ~= t[1])
    assert.equal(2, t[2])
  end)

  it("refuses knots that are not one 1-D length (SHAPE) or none at all (VALUE)", function()
    expect_code("SHAPE", function() dl.interp(1, dl.ones(3), dl.ones(4)) end)
    expect_code("SHAPE", function() dl.interp(1, dl.ones(2, 2), dl.ones(2, 2)) end)
    expect_code("VALUE", function() dl.interp(1, dl.zeros(0), dl.zeros(0)) end)
    expect_code("VALUE", function() dl.interp(1, dl.ones(2), dl.ones(2), {period = 0}) end)
    expect_code("DTYPE", function()
      dl.interp(1, dl.ones(2), dl.ones(2, {dtype = "complex128"}))
    end)
  end)
end)
