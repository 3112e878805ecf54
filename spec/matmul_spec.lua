-- Matrix products and the transpose shorthand.
--
-- This file documents:
--   dl.matmul(a, b, opts)  NumPy's matmul: (..., M, K) x (..., K, N) -> (..., M, N).
--   a:matmul(b, opts)      the same. A 1-D a is a row, a 1-D b a column, and
--                          that added dim is dropped from the result (two 1-D
--                          operands give a 0-d array: read it with :get()).
--                          Dims before the last two broadcast as in NumPy.
--                          opts: dtype = the dtype to compute in and return
--                          (the inputs must cast to it under same_kind);
--                          out = an array to write the result into (exact
--                          shape, a dtype the result casts to under same_kind;
--                          it may be one of the operands). Returns out.
--   dl.dot(a, b), a:dot(b) NumPy's dot: the sum over the last dim of a and the
--                          second-to-last dim of b (its only dim when 1-D).
--                          For 1-D and 2-D operands this is matmul; for N-D,
--                          dot(a[P..., K], b[Q..., K, N]) has shape (P..., Q..., N).
--   a:T()                  a view with the dims reversed (NumPy's a.T).
--
-- The result dtype is the promotion of the two (int32 with float32 is
-- float64, int8 with uint8 is int16). float32, float64, complex64 and
-- complex128 multiply through CBLAS (OpenBLAS); float16 and bfloat16 compute
-- in float32 and round once; integers wrap on overflow as in NumPy; bool is
-- an OR of ANDs. Arrays on a backend the host cannot address raise
-- UNSUPPORTED (move them with dl.device_put(a, "cpu") first).
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local expect_code = support.expect_code

-- Registered once per Lua state (busted runs every spec file in one).
local HANDLES, HOSTMEM = "engine_mm", "engine_mm_host"
if not support.registered(HANDLES) then tb.register{name = HANDLES} end
if not support.registered(HOSTMEM) then tb.register{name = HOSTMEM, host_pointer = true} end

local A = {{1, 2, 3}, {4, 5, 6}}        -- 2 x 3
local B = {{7, 8}, {9, 10}, {11, 12}}   -- 3 x 2

-- Whether two lists of numbers agree to within a relative tolerance.
local function close(want, got, tol)
  for i = 1, #want do
    if math.abs(want[i] - got[i]) > tol * math.max(1, math.abs(want[i])) then return false end
  end
  return #want == #got
end

describe("dl.matmul(a, b)", function()
  it("multiplies two matrices", function()
    local c = dl.matmul(dl.array(A), dl.array(B))
    assert.same({2, 2}, c.shape)
    assert.equal("int64", c.dtype)
    assert.same({{58, 64}, {139, 154}}, c:totable())
  end)

  it("is also the method a:matmul(b)", function()
    local a, b = dl.array(A, {dtype = "float32"}), dl.array(B, {dtype = "float32"})
    assert.same({{58, 64}, {139, 154}}, a:matmul(b):totable())
  end)

  it("takes a 1-D first operand as a row and a 1-D second operand as a column", function()
    local v = dl.array{1, 2, 3}
    local vb = dl.matmul(v, dl.array(B))
    assert.same({2}, vb.shape)                   -- (3) x (3, 2) -> (2)
    assert.same({58, 64}, vb:totable())
    assert.same({14, 32}, dl.matmul(dl.array(A), v):totable()) -- (2, 3) x (3) -> (2)
  end)

  it("gives a 0-d array for two vectors", function()
    local v = dl.array{1.0, 2.0, 3.0}
    local d = dl.matmul(v, v)
    assert.equal(0, d.ndim)
    assert.equal(14, d:get())
  end)

  it("multiplies stacks of matrices, broadcasting the leading dims", function()
    local a = dl.arange(12):reshape{2, 1, 2, 3}  -- 2 x 1 stacks of 2 x 3
    local b = dl.arange(24):reshape{4, 3, 2}     -- 4 stacks of 3 x 2
    local c = dl.matmul(a, b)
    assert.same({2, 4, 2, 2}, c.shape)
    -- c[i][j] is a[i][1] times b[j]
    assert.same(dl.matmul(a[2][1], b[3]):totable(), c[2][3]:totable())
    assert.same(dl.matmul(a[1][1], b[4]):totable(), c[1][4]:totable())
  end)

  it("promotes the dtypes of the two operands", function()
    local i32 = dl.array({{1, 2}}, {dtype = "int32"})
    local f32 = dl.array({{3}, {4}}, {dtype = "float32"})
    assert.equal("float64", dl.matmul(i32, f32).dtype)
    local i8 = dl.array({{1, 2}}, {dtype = "int8"})
    local u8 = dl.array({{3}, {4}}, {dtype = "uint8"})
    assert.equal("int16", dl.matmul(i8, u8).dtype)
    assert.same({{11}}, dl.matmul(i8, u8):totable())
  end)

  it("computes float16 in float32 and rounds once", function()
    local h = dl.array({{0.1, 0.2, 0.3}}, {dtype = "float16"})
    local g = dl.array({{0.3}, {0.2}, {0.1}}, {dtype = "float16"})
    local c = dl.matmul(h, g)
    assert.equal("float16", c.dtype)
    assert.equal(0.0999755859375, c:get(1, 1)) -- NumPy 1.24 gives the same float16
  end)

  it("wraps integers on overflow, as NumPy does", function()
    local a = dl.array({{100, 100}}, {dtype = "int8"})
    local b = dl.array({{100}, {100}}, {dtype = "int8"})
    assert.equal(32, dl.matmul(a, b):get(1, 1))           -- 20000 mod 256
    assert.equal(20000, dl.matmul(a, b, {dtype = "int32"}):get(1, 1))
  end)

  it("multiplies booleans as an OR of ANDs", function()
    local a = dl.array{{true, false}, {false, false}}
    local b = dl.array{{true, true}, {true, false}}
    local c = dl.matmul(a, b)
    assert.equal("bool", c.dtype)
    assert.same({{true, true}, {false, false}}, c:totable())
  end)

  it("multiplies complex numbers", function()
    local a = dl.array({{{re = 1, im = 2}, {re = 3, im = -1}}}, {dtype = "complex128"})
    local b = dl.array({{{re = 0, im = 2}}, {1}}, {dtype = "complex128"})
    assert.same({re = -1, im = 1}, dl.matmul(a, b):get(1, 1))
  end)

  it("gives zeros when the inner dim is 0, and empty results for other zero dims", function()
    local z = dl.matmul(dl.zeros{2, 0}, dl.zeros{0, 3})
    assert.same({{0, 0, 0}, {0, 0, 0}}, z:totable())
    assert.same({0, 2}, dl.matmul(dl.zeros{0, 3}, dl.zeros{3, 2}).shape)
  end)

  it("reads views as they are: transposed, strided, reversed", function()
    local a = dl.array(A, {dtype = "float64"})
    local bt = dl.array{{7, 9, 11}, {8, 10, 12}}:T()      -- B, transposed in memory
    assert.same({{58, 64}, {139, 154}}, dl.matmul(a, bt):totable())
    local wide = dl.array{{1, 0, 2, 0, 3}, {4, 0, 5, 0, 6}}
    local strided = wide:slice(2, 1, -1, 2)                -- A, every other column
    assert.same({{58, 64}, {139, 154}}, dl.matmul(strided, dl.array(B)):totable())
    local reversed = dl.array{{6, 5, 4}, {3, 2, 1}}:slice(1, -1, 1, -1):slice(2, -1, 1, -1)
    assert.same({{58, 64}, {139, 154}}, dl.matmul(reversed, dl.array(B)):totable())
  end)

  it("agrees with NumPy on random float32 data", function()
    -- x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)) as float32
    -- (np.random.default_rng(7)), and x @ y, from NumPy 1.24 over the same OpenBLAS.
    local x = dl.array({
      {0.001230153371579945, 0.2987455427646637, -0.27413785457611084, -0.8905918598175049},
      {-0.454670786857605, -0.9916465282440186, 0.0601436011493206, 1.3402152061462402},
      {-0.49220651388168335, -0.6204748749732971, 0.4898420572280884, 0.35688701272010803}},
      {dtype = "float32"})
    local y = dl.array({{0.1054142490029335, -0.9304680228233337},
                        {-0.02925182320177555, 0.695303201675415},
                        {-1.3442145586013794, -0.45761576294898987},
                        {-1.9012227058410645, -1.289537787437439}}, {dtype = "float32"})
    local want = {{2.0531044006347656, 1.4804757833480835},
                  {-2.6478147506713867, -2.022219181060791},
                  {-1.370710015296936, -0.6578145027160645}}
    local got = dl.matmul(x, y):totable()
    for i = 1, 3 do assert.is_true(close(want[i], got[i], 1e-6), "row " .. i) end
  end)
end)

describe("dl.matmul(a, b, {out = c})", function()
  it("writes into out and returns it", function()
    local c = dl.zeros{2, 2}
    local r = dl.matmul(dl.array(A), dl.array(B), {out = c})
    assert.equal(c, r)
    assert.same({{58, 64}, {139, 154}}, c:totable())
  end)

  it("casts the result into out under same_kind (float64 into float32)", function()
    local c = dl.zeros({2, 2}, {dtype = "float32"})
    dl.matmul(dl.array(A, {dtype = "float64"}), dl.array(B, {dtype = "float64"}), {out = c})
    assert.same({{58, 64}, {139, 154}}, c:totable())
  end)

  it("may be an operand: the product is as if the operands were copied first", function()
    local a = dl.array{{1, 2}, {3, 4}}
    dl.matmul(a, a, {out = a})
    assert.same({{7, 10}, {15, 22}}, a:totable())
  end)

  it("may be a view, such as a transposed one", function()
    local c = dl.zeros{2, 2}
    dl.matmul(dl.array(A), dl.array(B), {out = c:T()})
    assert.same({{58, 139}, {64, 154}}, c:totable())
  end)
end)

describe("dl.dot(a, b)", function()
  it("is the inner product of two vectors (a 0-d array)", function()
    local d = dl.dot(dl.array{1, 2, 3}, dl.array{4, 5, 6})
    assert.equal(0, d.ndim)
    assert.equal(32, d:get())
    assert.equal(32, dl.array{1, 2, 3}:dot(dl.array{4, 5, 6}):get())
  end)

  it("is matmul for matrices", function()
    assert.same({{58, 64}, {139, 154}}, dl.dot(dl.array(A), dl.array(B)):totable())
  end)

  it("pairs every row of a with every matrix of b for N-D operands (unlike matmul)", function()
    local x = dl.arange(24):reshape{2, 3, 4}
    local y = dl.arange(40):reshape{5, 4, 2}
    local d = dl.dot(x, y)
    assert.same({2, 3, 5, 2}, d.shape)   -- (P..., Q..., N) = (2, 3) + (5) + (2)
    assert.same({2332, 2418}, d[2][3][4]:totable())  -- NumPy: np.dot(x, y)[1, 2, 3]
    assert.same({780, 802}, d[1][2][5]:totable())    -- np.dot(x, y)[0, 1, 4]
  end)
end)

describe("a:T()", function()
  it("reverses the dims, as a view of the same memory", function()
    local a = dl.array{{1, 2, 3}, {4, 5, 6}}
    local t = a:T()
    assert.same({3, 2}, t.shape)
    assert.same({{1, 4}, {2, 5}, {3, 6}}, t:totable())
    t[1][2] = 40
    assert.equal(40, a:get(2, 1))
  end)

  it("reverses every dim of an N-D array and leaves a 1-D array as it is", function()
    assert.same({4, 3, 2}, dl.zeros{2, 3, 4}:T().shape)
    assert.same({1, 2, 3}, dl.array{1, 2, 3}:T():totable())
  end)
end)

describe("matmul on other backends", function()
  it("computes on a backend whose memory the host addresses; the result stays there", function()
    local a = dl.array(A, {device = HOSTMEM})
    local c = dl.matmul(a, dl.array(B, {device = HOSTMEM}))
    assert.equal(HOSTMEM .. ":0", c.device)
    assert.same({{58, 64}, {139, 154}}, c:totable())
  end)

  it("raises UNSUPPORTED, with a hint to device_put, where the host cannot reach the memory", function()
    local a = dl.array(A, {device = HANDLES})
    local err = expect_code("UNSUPPORTED", dl.matmul, a, a:T())
    assert.matches("device_put", err.hint)
    local c = dl.matmul(dl.device_put(a, "cpu"), dl.array(B))  -- the way out
    assert.same({{58, 64}, {139, 154}}, c:totable())
  end)

  it("raises ARGUMENT for operands on different devices", function()
    local a = dl.array(A, {device = HOSTMEM})
    expect_code("ARGUMENT", dl.matmul, a, dl.array(B))
  end)
end)

describe("misuse of matmul and dot", function()
  it("raises SHAPE when the inner dims differ, naming both shapes", function()
    local err = expect_code("SHAPE", dl.matmul, dl.zeros{2, 3}, dl.zeros{4, 5})
    assert.matches("(2, 3)", err.message, 1, true)
    assert.matches("(4, 5)", err.message, 1, true)
    expect_code("SHAPE", dl.dot, dl.zeros{2, 3}, dl.zeros{2, 3})
  end)

  it("raises SHAPE for 0-d operands (multiply by a scalar with * instead)", function()
    local s = dl.array(2)
    expect_code("SHAPE", dl.matmul, s, dl.zeros{2, 2})
    expect_code("SHAPE", dl.dot, dl.zeros{2}, s)
  end)

  it("raises SHAPE when the leading dims do not broadcast", function()
    expect_code("SHAPE", dl.matmul, dl.zeros{2, 3, 3}, dl.zeros{4, 3, 3})
  end)

  it("raises ARGUMENT for an operand that is not an array", function()
    expect_code("ARGUMENT", dl.matmul, dl.zeros{2, 2}, {{1, 2}, {3, 4}})
    expect_code("ARGUMENT", dl.matmul, 2, dl.zeros{2, 2})
    expect_code("ARGUMENT", dl.dot, dl.zeros{2}, "x")
  end)

  it("raises ARGUMENT for unknown options and an out that is not an array", function()
    local a = dl.zeros{2, 2}
    expect_code("ARGUMENT", dl.matmul, a, a, {outt = a})
    expect_code("ARGUMENT", dl.matmul, a, a, {out = {}})
    expect_code("ARGUMENT", dl.matmul, a, a, "out")
    expect_code("ARGUMENT", dl.dot, a, a, {out = a})
  end)

  it("raises DTYPE for a dtype the inputs cannot be cast to, or an out it cannot go into", function()
    local f = dl.zeros{2, 2}
    expect_code("DTYPE", dl.matmul, f, f, {dtype = "int64"})
    expect_code("DTYPE", dl.matmul, f, f, {dtype = "float99"})
    expect_code("DTYPE", dl.matmul, f, f, {out = dl.zeros({2, 2}, {dtype = "int64"})})
  end)

  it("raises SHAPE for an out of another shape (out does not broadcast)", function()
    local f = dl.zeros{2, 2}
    expect_code("SHAPE", dl.matmul, f, f, {out = dl.zeros{1, 2}})
  end)

  it("raises READ_ONLY for a read-only out", function()
    local ro = support.readonly_array()                   -- 2 x 3, read-only
    expect_code("READ_ONLY", dl.matmul, dl.zeros{2, 2}, dl.zeros{2, 3}, {out = ro})
  end)

  it("gives DELETED, never a crash, when a finalizer deletes an operand during the call", function()
    -- A memory limit just below what the result needs makes dlbridge collect
    -- garbage before it allocates (see memory_spec.lua): the pending
    -- finalizer runs inside the call and deletes an operand.
    local target, hits = nil, 0
    support.finalized_by(function() target:delete(); hits = hits + 1 end)
    finally(function() tb.set_memory_limit(0) end)
    for _, f in ipairs{dl.matmul, dl.dot} do
      target = dl.zeros{16, 16}
      local other = dl.ones{16, 16}
      tb.set_memory_limit(dl.memory().in_use + 1024)     -- the 2 KiB result does not fit
      expect_code("DELETED", f, other, target)
      tb.set_memory_limit(0)
      support.finalized_by(function() target:delete(); hits = hits + 1 end)
    end
    assert.equal(2, hits)
  end)

  it("raises DELETED for a deleted operand or out", function()
    local a, b, c = dl.zeros{2, 2}, dl.zeros{2, 2}, dl.zeros{2, 2}
    b:delete()
    expect_code("DELETED", dl.matmul, a, b)
    expect_code("DELETED", a.matmul, b, a)
    expect_code("DELETED", dl.dot, a, b)
    expect_code("DELETED", b.T, b)
    c:delete()
    expect_code("DELETED", dl.matmul, a, a, {out = c})
  end)
end)
