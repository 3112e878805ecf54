-- Making arrays from shapes, other arrays and sequences: NumPy's eye,
-- identity, zeros_like and friends, logspace, meshgrid and convolve.
--
--   dl.eye(n, m, {k =, dtype =, device =})   ones on diagonal k of an n x m array
--   dl.identity(n, {dtype =, device =})       the n x n identity
--   dl.zeros_like(a, opts), dl.ones_like(a, opts), dl.empty_like(a, opts),
--   dl.full_like(a, value, opts)             a's shape, dtype and device unless
--                                            opts = {shape =, dtype =, device =}
--   dl.logspace(start, stop, num, {base = 10, endpoint = true, dtype =, device =})
--   dl.meshgrid(x, y, ..., {indexing = "xy" | "ij", sparse =, copy =})
--   dl.convolve(a, v, {mode = "full" | "same" | "valid"})   1-D, as NumPy
--
-- The default dtype of eye, identity and logspace is float64, the default
-- device the cpu.
local dl = require "dlbridge"
local support = require "support"
local oracle = require "construct_oracle"
local tb = require "testbackend"

local expect_code = support.expect_code
local unpack = table.unpack or unpack -- Lua 5.1 and LuaJIT have only unpack
local ENGINE = "engine_construct" -- memory behind handles: copies only
if not support.registered(ENGINE) then tb.register{name = ENGINE} end

describe("dl.eye and dl.identity", function()
  it("put ones on a diagonal", function()
    assert.same({{1, 0}, {0, 1}}, dl.identity(2):totable())
    assert.same({{0, 1, 0}, {0, 0, 1}}, dl.eye(2, 3, {k = 1}):totable())
    assert.same({{0, 0}, {1, 0}, {0, 1}}, dl.eye(3, 2, {k = -1}):totable())
    assert.same({{0, 0}, {0, 0}}, dl.eye(2, {k = 5}):totable())
  end)

  it("take dtype and device", function()
    local e = dl.eye(3, {dtype = "int32", device = ENGINE})
    assert.equal("int32", e.dtype)
    assert.equal(ENGINE .. ":0", e.device)
    assert.same({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, e:totable())
  end)

  it("raise SHAPE for a negative extent", function()
    expect_code("SHAPE", function() return dl.eye(-1) end)
    expect_code("ARGUMENT", function() return dl.eye(2, {j = 1}) end)
  end)
end)

describe("dl.zeros_like and friends", function()
  local a = dl.arange(6, {dtype = "int16"}):view(2, 3)

  it("keep the shape, dtype and device", function()
    local z = dl.zeros_like(a)
    assert.same({2, 3}, z.shape)
    assert.equal("int16", z.dtype)
    assert.same({{1, 1, 1}, {1, 1, 1}}, dl.ones_like(a):totable())
    assert.same({{7, 7, 7}, {7, 7, 7}}, dl.full_like(a, 7):totable())
    assert.same({2, 3}, dl.empty_like(a).shape)
    assert.equal(ENGINE .. ":0", dl.zeros_like(a:to(ENGINE)).device)
  end)

  it("unless opts say otherwise", function()
    local f = dl.full_like(a, 0.5, {dtype = "float32", shape = {4}})
    assert.equal("float32", f.dtype)
    assert.same({0.5, 0.5, 0.5, 0.5}, f:totable())
  end)

  it("store the value strictly (VALUE where the dtype cannot hold it)", function()
    expect_code("VALUE", function() return dl.full_like(a, 0.5) end)
    expect_code("VALUE", function() return dl.full_like(a, 70000) end)
  end)
end)

describe("dl.logspace", function()
  it("gives base ^ evenly spaced exponents", function()
    assert.same({1.0, 10.0, 100.0}, dl.logspace(0, 2, 3):totable())
    assert.same({1.0, 2.0, 4.0, 8.0}, dl.logspace(0, 3, 4, {base = 2}):totable())
    assert.same({1.0, 10.0}, dl.logspace(0, 2, 2, {endpoint = false}):totable())
    assert.equal(50, dl.logspace(0, 1).size)
  end)

  it("casts to the dtype asked for, as astype does", function()
    assert.same({1, 10, 100}, dl.logspace(0, 2, 3, {dtype = "int64"}):totable())
  end)
end)

describe("dl.meshgrid", function()
  local x, y = dl.arange(3), dl.arange(2)

  it("returns one array per input, xy (Cartesian) indexing by default", function()
    local X, Y = dl.meshgrid(x, y)
    assert.same({{0, 1, 2}, {0, 1, 2}}, X:totable())
    assert.same({{0, 0, 0}, {1, 1, 1}}, Y:totable())
  end)

  it("takes ij (matrix) indexing, sparse outputs and views instead of copies", function()
    local I, J = dl.meshgrid(x, y, {indexing = "ij"})
    assert.same({3, 2}, I.shape)
    assert.same({{0, 1}, {0, 1}, {0, 1}}, J:totable())
    local SX, SY = dl.meshgrid(x, y, {sparse = true})
    assert.same({1, 3}, SX.shape)
    assert.same({2, 1}, SY.shape)
    local VX = dl.meshgrid(x, y, {copy = false})
    assert.is_true(VX.readonly) -- a broadcast view
  end)

  it("raises ARGUMENT for an unknown indexing", function()
    expect_code("ARGUMENT", function() return dl.meshgrid(x, y, {indexing = "yx"}) end)
  end)
end)

describe("dl.convolve", function()
  it("is NumPy's convolve of two 1-D arrays", function()
    assert.same({0.0, 1.0, 2.5, 4.0, 1.5}, dl.convolve({1, 2, 3}, {0, 1, 0.5}):totable())
    assert.same({1.0, 2.5, 4.0}, dl.convolve({1, 2, 3}, {0, 1, 0.5}, {mode = "same"}):totable())
    assert.same({2.5}, dl.convolve({1, 2, 3}, {0, 1, 0.5}, {mode = "valid"}):totable())
  end)

  it("computes in the promoted dtype, integers wrapping as NumPy's", function()
    local r = dl.convolve(dl.array({100}, {dtype = "int8"}), dl.array({3}, {dtype = "int8"}))
    assert.equal("int8", r.dtype)
    assert.equal(44, r[1])
  end)

  it("raises VALUE for an empty array, SHAPE for more than 1-D", function()
    expect_code("VALUE", function() return dl.convolve(dl.zeros{0}, {1}) end)
    expect_code("SHAPE", function() return dl.convolve(dl.zeros{2, 2}, {1}) end)
    expect_code("ARGUMENT", function() return dl.convolve({1}, {1}, {mode = "middle"}) end)
  end)

  it("raises UNSUPPORTED on memory the host cannot address", function()
    local err = expect_code("UNSUPPORTED", function()
      return dl.convolve(dl.arange(3):to(ENGINE), dl.arange(2):to(ENGINE))
    end)
    assert.truthy(tostring(err.hint):find("device_put", 1, true))
  end)
end)

describe("agrees with NumPy", function()
  it("over random shapes, dtypes and options", function()
    local py, cases = oracle.py, oracle.new()
    for _ = 1, 40 do
      local dtype = oracle.pick(oracle.DTYPES)
      local n, m, k = math.random(0, 4), math.random(0, 4), math.random(-4, 4)
      cases:add("eye", function() return dl.eye(n, m, {k = k, dtype = dtype}) end,
                string.format("np.eye(%d, %d, k=%d, dtype='%s')", n, m, k, dtype))
      local a = oracle.array(dtype, oracle.shape(math.random(0, 3)))
      cases:add("zeros_like", function() return dl.zeros_like(a) end, "np.zeros_like(" .. py(a) .. ")")
      cases:add("ones_like", function() return dl.ones_like(a) end, "np.ones_like(" .. py(a) .. ")")
      local num, base = math.random(0, 6), oracle.pick{2, 10, 0.5, 3}
      local start, stop, endpoint = math.random(-3, 3), math.random(-3, 3), math.random(2) == 1
      cases:add("logspace", function()
        return dl.logspace(start, stop, num, {base = base, endpoint = endpoint})
      end, string.format("np.logspace(%d, %d, %d, base=%s, endpoint=%s)", start, stop, num,
                         py(base), py(endpoint)), {rtol = 1e-14})
      local inputs, pyinputs = {}, {}
      for i = 1, math.random(1, 3) do
        inputs[i] = oracle.array(dtype, oracle.shape(math.random(1, 2), 1, 3))
        pyinputs[i] = py(inputs[i])
      end
      local indexing, sparse = oracle.pick{"xy", "ij"}, math.random(2) == 1
      inputs[#inputs + 1] = {indexing = indexing, sparse = sparse}
      cases:add("meshgrid", function() return dl.meshgrid(unpack(inputs)) end,
                string.format("np.meshgrid(%s, indexing='%s', sparse=%s)",
                              table.concat(pyinputs, ", "), indexing, py(sparse)))
      local d2 = oracle.pick(oracle.DTYPES)
      local x = oracle.array(dtype, {math.random(1, 7)})
      local v = oracle.array(d2, {math.random(1, 7)})
      local mode = oracle.pick{"full", "same", "valid"}
      local float = dl.zeros({}, {dtype = dtype}):add(dl.zeros({}, {dtype = d2})).dtype
      -- NumPy sums float32 products in float32 (BLAS), dlbridge in double: the
      -- results differ by rounding, which cancellation makes absolute.
      local tol = ({float16 = {rtol = 2e-3, atol = 0.5}, float32 = {rtol = 1e-5, atol = 1e-2},
                    complex64 = {rtol = 1e-5, atol = 1e-2}, float64 = {rtol = 1e-12, atol = 1e-9},
                    complex128 = {rtol = 1e-12, atol = 1e-9}})[float]
      cases:add("convolve " .. mode, function() return dl.convolve(x, v, {mode = mode}) end,
                string.format("np.convolve(%s, %s, mode='%s')", py(x), py(v), mode), tol)
    end
    assert.same({}, cases:run())
  end)
end)

-- In ctest, DLB_CUDA_DRIVER names the stand-in driver (tests/cuda).
if support.backend_info("cuda").available then
  describe("on a cuda device", function()
    it("makes the arrays there", function()
      local e = dl.eye(3, {k = 1, device = "cuda:0"})
      assert.equal("cuda:0", e.device)
      assert.same(dl.eye(3, {k = 1}):totable(), e:to("cpu"):totable())
      local a = dl.arange(4):to("cuda:0")
      assert.equal("cuda:0", dl.full_like(a, 2).device)
      assert.same({2, 2, 2, 2}, dl.full_like(a, 2):to("cpu"):totable())
      local X, Y = dl.meshgrid(a, a:slice(1, 1, 2))
      assert.equal("cuda:0", Y.device)
      assert.same({{0, 1, 2, 3}, {0, 1, 2, 3}}, X:to("cpu"):totable())
      assert.same({{0, 0, 0, 0}, {1, 1, 1, 1}}, Y:to("cpu"):totable())
      expect_code("UNSUPPORTED", function() return dl.convolve(a, a) end)
    end)
  end)
end
