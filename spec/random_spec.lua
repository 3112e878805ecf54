-- Random numbers: NumPy's Generator, bit for bit.
--
--   local rng = dl.random.default_rng(seed)   -- SeedSequence(seed) + PCG64, as NumPy
--   rng:random(shape, {dtype = "float32"})    -- [0, 1); shape {2, 3} or 2, 3
--   rng:integers(high) / rng:integers(low, high, shape, {dtype =, endpoint =})
--   rng:standard_normal(shape, {dtype = "float32"})   -- NumPy's ziggurat
--   rng:normal(loc, scale, shape)  rng:uniform(low, high, shape)
--   rng:permutation(n or array)    rng:shuffle(array)   -- along dim 1
--   rng:exponential(scale, shape)  rng:gamma(shape_k, scale, shape)  rng:beta(a, b, shape)
--   rng:poisson(lam, shape)        rng:binomial(n, p, shape)         -- int64
--   rng:choice(n or array, size, {replace = true, p = probs, shuffle = true})
--   rng:state() / dl.random.from_state(t)     -- NumPy's bit_generator.state
--   rng:spawn(n)                               -- SeedSequence.spawn's children
--
-- A seed is an integer >= 0, a hex string "0x..." of any width (a 128-bit
-- seed: Lua integers stop at 64 bits), or a list of them (NumPy's entropy
-- sequence); nil takes fresh entropy from the system. Without a shape a
-- draw returns one Lua number (NumPy returns a scalar); with a shape
-- (an integer or a table) it returns a new cpu array. The same seed and the
-- same calls give the same numbers as np.random.default_rng(seed) (NumPy
-- 1.24): the specs below ask NumPy itself, in the same run, through
-- /usr/bin/python3 and tests/random/numpy_draws.py.
local dl = require "dlbridge"
local support = require "support"
local numpy = require "numpy_draws"

local expect_code = support.expect_code

local N = numpy.N -- outputs of each case
local numpy_results, from_hex, assert_same_bytes =
  numpy.numpy_results, numpy.from_hex, numpy.assert_same_bytes
local SEEDS = { 0, 1, 12345, "0x9b4e7a11c2d35f0884e6a7b3c1d2e0f5" }

-- Each case: a name, the Lua call on a fresh generator, and NumPy's call
-- with the same seed (N = 10,000 outputs each).
local CASES = {
  { "random", function(rng) return rng:random(N) end, "rng.random(N)" },
  { "random float32", function(rng) return rng:random(N, { dtype = "float32" }) end,
    "rng.random(N, dtype=np.float32)" },
  { "integers(high), the 32-bit path", function(rng) return rng:integers(10, nil, N) end,
    "rng.integers(10, size=N)" },
  { "integers(low, high), negative low", function(rng) return rng:integers(-5, 100, N) end,
    "rng.integers(-5, 100, size=N)" },
  { "integers, a 64-bit range", function(rng)
      return rng:integers(-1099511627776, 1125899906842624, N) -- -2^40, 2^50: integers, not 2 ^ 40
    end,
    "rng.integers(-(1 << 40), 1 << 50, size=N)" },
  -- (the whole int64 range, math.mininteger to math.maxinteger: spec/lua53/random_spec.lua)
  { "integers, a range of exactly 2^32", function(rng)
      return rng:integers(0, 0xffffffff, N, { endpoint = true })
    end, "rng.integers(0, 2**32 - 1, size=N, endpoint=True)" },
  { "integers int32", function(rng) return rng:integers(-100, 100, N, { dtype = "int32" }) end,
    "rng.integers(-100, 100, size=N, dtype=np.int32)" },
  { "integers int32, the whole range", function(rng)
      return rng:integers(-2147483648, 2147483647, N, { dtype = "int32", endpoint = true })
    end, "rng.integers(-2**31, 2**31 - 1, size=N, dtype=np.int32, endpoint=True)" },
  { "integers int16", function(rng) return rng:integers(-300, 3000, N, { dtype = "int16" }) end,
    "rng.integers(-300, 3000, size=N, dtype=np.int16)" },
  { "integers int8", function(rng) return rng:integers(-7, 20, N, { dtype = "int8" }) end,
    "rng.integers(-7, 20, size=N, dtype=np.int8)" },
  { "integers uint8, the whole range", function(rng)
      return rng:integers(0, 256, N, { dtype = "uint8" })
    end, "rng.integers(0, 256, size=N, dtype=np.uint8)" },
  { "integers uint16", function(rng) return rng:integers(5, 40000, N, { dtype = "uint16" }) end,
    "rng.integers(5, 40000, size=N, dtype=np.uint16)" },
  { "integers uint32", function(rng)
      return rng:integers(0, 3000000000, N, { dtype = "uint32" })
    end,
    "rng.integers(0, 3000000000, size=N, dtype=np.uint32)" },
  { "integers uint64", function(rng)
      return rng:integers(0, 9007199254740992, N, { dtype = "uint64" }) -- 2^53
    end,
    "rng.integers(0, 2**53, size=N, dtype=np.uint64)" },
  -- (a 62-bit uint64 range: spec/lua53/random_spec.lua; Lua 5.1, 5.2 and LuaJIT
  -- have integers to 2^53 only)
  { "integers bool", function(rng) return rng:integers(0, 2, N, { dtype = "bool" }) end,
    "rng.integers(0, 2, size=N, dtype=np.bool_)" },
  { "standard_normal", function(rng) return rng:standard_normal(N) end,
    "rng.standard_normal(N)" },
  { "standard_normal float32", function(rng)
      return rng:standard_normal(N, { dtype = "float32" })
    end, "rng.standard_normal(N, dtype=np.float32)" },
  { "normal", function(rng) return rng:normal(3, 2.5, N) end, "rng.normal(3, 2.5, N)" },
  { "uniform", function(rng) return rng:uniform(-3, 7, N) end, "rng.uniform(-3, 7, N)" },
  { "permutation", function(rng) return rng:permutation(N) end, "rng.permutation(N)" },
  { "shuffle of a 2-d array (rows)", function(rng)
      local a = dl.arange(3 * N):view(N, 3)
      rng:shuffle(a)
      return a
    end, "(lambda a: (rng.shuffle(a), a)[1])(np.arange(3 * N).reshape(N, 3))" },
  { "shuffle of float32", function(rng)
      local a = dl.arange(N, { dtype = "float32" })
      rng:shuffle(a)
      return a
    end, "(lambda a: (rng.shuffle(a), a)[1])(np.arange(N, dtype=np.float32))" },
  -- exponential, gamma, beta (float64); each of NumPy's algorithms
  { "exponential", function(rng) return rng:exponential(2.5, N) end, "rng.exponential(2.5, N)" },
  { "gamma, shape < 1 (Johnk's rejection)", function(rng) return rng:gamma(0.3, 2, N) end,
    "rng.gamma(0.3, 2, N)" },
  { "gamma, shape == 1 (the exponential)", function(rng) return rng:gamma(1, 3, N) end,
    "rng.gamma(1, 3, N)" },
  { "gamma, shape > 1 (Marsaglia and Tsang)", function(rng) return rng:gamma(4.5, 0.5, N) end,
    "rng.gamma(4.5, 0.5, N)" },
  { "gamma, shape 0 (no draw)", function(rng) return rng:gamma(0, 2, N) end, "rng.gamma(0, 2, N)" },
  { "beta, a and b <= 1 (Johnk)", function(rng) return rng:beta(0.5, 0.7, N) end,
    "rng.beta(0.5, 0.7, N)" },
  { "beta, a tiny (Johnk, mostly rejected)", function(rng) return rng:beta(0.01, 0.02, N) end,
    "rng.beta(0.01, 0.02, N)" },
  { "beta, one above 1 (two gammas)", function(rng) return rng:beta(2, 0.7, N) end,
    "rng.beta(2, 0.7, N)" },
  { "beta, both above 1", function(rng) return rng:beta(2.5, 3.5, N) end, "rng.beta(2.5, 3.5, N)" },
  -- poisson and binomial (int64)
  { "poisson, lam < 10 (products of uniforms)", function(rng) return rng:poisson(3.5, N) end,
    "rng.poisson(3.5, N)" },
  { "poisson, lam == 10 (PTRS)", function(rng) return rng:poisson(10, N) end, "rng.poisson(10, N)" },
  { "poisson, lam 1e6", function(rng) return rng:poisson(1e6, N) end, "rng.poisson(1e6, N)" },
  { "poisson, lam near poisson_lam_max", function(rng) return rng:poisson(9e18, N) end,
    "rng.poisson(9e18, N)" },
  { "poisson, lam 0 (no draw)", function(rng) return rng:poisson(0, N) end, "rng.poisson(0, N)" },
  { "binomial, n * p <= 30 (inversion)", function(rng) return rng:binomial(100, 0.3, N) end,
    "rng.binomial(100, 0.3, N)" },
  { "binomial, p > 0.5 (n less a draw for 1 - p)", function(rng)
      return rng:binomial(100, 0.8, N)
    end, "rng.binomial(100, 0.8, N)" },
  { "binomial, n * p > 30 (BTPE)", function(rng) return rng:binomial(1000, 0.3, N) end,
    "rng.binomial(1000, 0.3, N)" },
  { "binomial, BTPE for 1 - p", function(rng) return rng:binomial(1000, 0.7, N) end,
    "rng.binomial(1000, 0.7, N)" },
  { "binomial, n 1e12", function(rng) return rng:binomial(1000000000000, 0.4, N) end,
    "rng.binomial(1000000000000, 0.4, N)" },
  { "binomial, p 1 (a draw each, all n)", function(rng) return rng:binomial(10, 1, N) end,
    "rng.binomial(10, 1.0, N)" },
  -- choice: its four routes
  { "choice(n): integers(0, n)", function(rng) return rng:choice(10, N) end,
    "rng.choice(10, N)" },
  { "choice with p (cdf and searchsorted)", function(rng)
      return rng:choice(5, N, { p = { 0.1, 0.2, 0, 0.3, 0.4 } })
    end, "rng.choice(5, N, p=[0.1, 0.2, 0, 0.3, 0.4])" },
  { "choice without replacement (Floyd, then a shuffle)", function(rng)
      return rng:choice(1000, 500, { replace = false })
    end, "rng.choice(1000, 500, replace=False)" },
  { "choice without replacement, shuffle = false", function(rng)
      return rng:choice(1000, 500, { replace = false, shuffle = false })
    end, "rng.choice(1000, 500, replace=False, shuffle=False)" },
  { "choice without replacement, a large share (tail shuffle)", function(rng)
      return rng:choice(100000, 5000, { replace = false })
    end, "rng.choice(100000, 5000, replace=False)" },
  { "choice, tail shuffle without shuffle", function(rng)
      return rng:choice(100000, 5001, { replace = false, shuffle = false })
    end, "rng.choice(100000, 5001, replace=False, shuffle=False)" },
  { "choice with p without replacement (rounds)", function(rng)
      return rng:choice(50, 30, { replace = false, p = dl.arange(50):astype("float64") / 1225 })
    end, "rng.choice(50, 30, replace=False, p=np.arange(50)/1225)" },
  { "choice from an array (its elements)", function(rng)
      return rng:choice(dl.arange(10, 20), { 30, 4 })
    end, "rng.choice(np.arange(10, 20), (30, 4))" },
  { "choice of rows of a 2-d array", function(rng)
      return rng:choice(dl.arange(300):view(100, 3), 40, { replace = false })
    end, "rng.choice(np.arange(300).reshape(100, 3), 40, replace=False)" },
}

describe("dl.random.default_rng", function()
  local expected
  setup(function()
    local requests = {}
    for s, seed in ipairs(SEEDS) do
      for c, case in ipairs(CASES) do
        requests[#requests + 1] = { key = s .. ":" .. c, seed = seed, expr = case[3] }
      end
    end
    expected = numpy_results(requests)
  end)

  for c, case in ipairs(CASES) do
    it("draws NumPy's numbers: " .. case[1], function()
      for s, seed in ipairs(SEEDS) do
        local got = case[2](dl.random.default_rng(seed))
        assert_same_bytes(expected[s .. ":" .. c], got, case[1] .. ", seed " .. tostring(seed))
      end
    end)
  end

  it("returns one Lua number without a shape, as NumPy returns a scalar", function()
    -- (an integer or a float, as NumPy's scalar, on Lua 5.3 and later: spec/lua53/random_spec.lua)
    local rng = dl.random.default_rng(42)
    local x = rng:random()
    assert.is_number(x)
    assert.is_true(0 <= x and x < 1)
    local n = rng:integers(10)
    assert.is_number(n)
    assert.is_true(n == math.floor(n) and 0 <= n and n < 10)
    assert.is_number(rng:standard_normal())
    assert.is_number(rng:normal())
    assert.is_number(rng:uniform())
    local a = rng:random{ 2, 3 }
    assert.same({ 2, 3 }, a.shape)
    assert.equal("float64", a.dtype)
    assert.same({}, rng:random{}.shape) -- {} is a 0-d array
  end)

  it("takes the shape as an integer or a table, and 1e7 is an integer", function()
    local rng = dl.random.default_rng(1)
    assert.same({ 3 }, rng:random(3).shape)
    -- random and standard_normal end with their shape: integers will do, as for dl.zeros
    assert.same({ 2, 3 }, rng:random(2, 3).shape)
    assert.same("float32", rng:standard_normal(2, 3, { dtype = "float32" }).dtype)
    assert.same({ 2, 2 }, rng:integers(0, 5, { 2, 2 }).shape)
    assert.same({ 4 }, rng:standard_normal(4.0).shape)
  end)

  it("mixes 32-bit and 64-bit draws as NumPy does (a 64-bit draw keeps the half buffered)",
    function()
      local expr = "np.concatenate([rng.random(3, dtype=np.float32), rng.random(2), " ..
                   "rng.random(1, dtype=np.float32), rng.standard_normal(1), " ..
                   "[rng.random(dtype=np.float32)], rng.integers(0, 7, 5)]).astype(np.float32)"
      local ref = numpy_results{ { key = "mix", seed = 7, expr = expr } }.mix
      local rng = dl.random.default_rng(7)
      local parts = {
        rng:random(3, { dtype = "float32" }), rng:random(2):astype("float32"),
        rng:random(1, { dtype = "float32" }), rng:standard_normal(1):astype("float32"),
        dl.array({ rng:random(nil, { dtype = "float32" }) }, { dtype = "float32" }),
        rng:integers(0, 7, 5):astype("float32"),
      }
      assert_same_bytes(ref, dl.concat(parts), "mixed draws")
    end)

  it("seeds as NumPy does from a list of integers and hex strings (an entropy sequence)", function()
    local seed = { 1, 2, "0xffffffffffffffffff", 3 }
    local ref = numpy_results{ { key = "s", seed = seed, expr = "rng.random(5)" } }.s
    assert_same_bytes(ref, dl.random.default_rng(seed):random(5), "a list seed")
  end)

  it("mixes in entropy longer than its pool, as NumPy does", function()
    local long = {}
    for i = 1, 1500 do long[i] = (i * 2654435761) % 1099511627776 end -- below 2^40
    local hex = "0x" .. string.rep("9e3779b97f4a7c15", 40)
    local r = numpy_results{ { key = "list", seed = long, expr = "rng.random(3)" },
                             { key = "hex", seed = hex, expr = "rng.random(3)" } }
    assert_same_bytes(r.list, dl.random.default_rng(long):random(3), "a seed of 1500 integers")
    assert_same_bytes(r.hex, dl.random.default_rng(hex):random(3), "a 2560-bit seed")
  end)

  it("takes a 128-bit seed as a hex string; a list of its 32-bit words, low first, is the same",
    function()
      local a = dl.random.default_rng("0x00000004000000030000000200000001"):random(4)
      local b = dl.random.default_rng{ 1, 2, 3, 4 }:random(4)
      assert.same(a:totable(), b:totable())
    end)

  it("draws fresh entropy without a seed", function()
    local a, b = dl.random.default_rng(), dl.random.default_rng()
    -- (over the whole int64 range, Lua 5.3 and later: spec/lua53/random_spec.lua)
    local two_to_53 = 9007199254740992 -- an integer (2 ^ 53 is a float on Lua 5.3 and later)
    assert.are_not.equal(a:integers(0, two_to_53), b:integers(0, two_to_53))
  end)

  it("passes a generator through, as NumPy does", function()
    local rng = dl.random.default_rng(3)
    assert.equal(rng, dl.random.default_rng(rng))
  end)

  it("prints as a Generator", function()
    assert.equal("dlbridge.Generator(PCG64)", tostring(dl.random.default_rng(0)))
  end)
end)

describe("exponential, gamma, beta, poisson, binomial and choice", function()
  -- Each takes scalar parameters (NumPy also broadcasts arrays of them:
  -- not here), then a shape; without a shape, one Lua number.
  it("draw one number without a shape, and NumPy's scalar is the same number", function()
    local calls = { -- the call, NumPy's, the dtype of NumPy's scalar
      { function(r) return r:exponential() end, "rng.exponential()", "float64" },
      { function(r) return r:gamma(2.5) end, "rng.gamma(2.5)", "float64" },
      { function(r) return r:beta(0.5, 0.5) end, "rng.beta(0.5, 0.5)", "float64" },
      { function(r) return r:poisson(4) end, "rng.poisson(4)", "int64" },
      { function(r) return r:binomial(40, 0.5) end, "rng.binomial(40, 0.5)", "int64" },
      { function(r) return r:choice(7) end, "rng.choice(7)", "int64" },
      { function(r) return r:choice(7, nil, { replace = false }) end,
        "rng.choice(7, replace=False)", "int64" },
      { function(r) return r:choice(3, nil, { p = { 0.2, 0.3, 0.5 } }) end,
        "rng.choice(3, p=[0.2, 0.3, 0.5])", "int64" },
      { function(r) return r:choice(dl.arange(5, 10):astype("float64")) end,
        "rng.choice(np.arange(5, 10).astype(np.float64))", "float64" },
    }
    local requests = {}
    for i, c in ipairs(calls) do requests[i] = { key = tostring(i), seed = 11, expr = c[2] } end
    local ref = numpy_results(requests)
    for i, c in ipairs(calls) do
      local v = c[1](dl.random.default_rng(11))
      assert.is_number(v)
      assert_same_bytes(ref[tostring(i)], dl.array(v, { dtype = c[3] }), c[2])
    end
  end)

  it("make int64 (poisson, binomial, choice(n)) and float64 arrays; size 0 and 0-d", function()
    local rng = dl.random.default_rng(2)
    assert.equal("int64", rng:poisson(3, 4).dtype)
    assert.equal("int64", rng:binomial(5, 0.5, 4).dtype)
    assert.equal("int64", rng:choice(5, 4).dtype)
    assert.equal("float64", rng:gamma(2, 1, 4).dtype)
    assert.equal("float32", rng:choice(dl.zeros(3, { dtype = "float32" }), 2).dtype)
    local before = rng:state()
    assert.same({ 0 }, rng:exponential(1, 0).shape)
    assert.same({ 2, 0 }, rng:choice(5, { 2, 0 }, { replace = false }).shape)
    assert.same({ 0 }, rng:choice(0, 0).shape) -- an empty population, no samples: NumPy's too
    assert.same({ 0 }, rng:choice(dl.zeros(0), 0).shape)
    assert.same(before, rng:state()) -- nothing drawn
    local ref = numpy_results{ { key = "z", seed = 2, expr = "rng.beta(2, 3, ())" },
                               { key = "big", seed = 2, expr = "rng.poisson(20, (300, 300))" } }
    local z = dl.random.default_rng(2):beta(2, 3, {})
    assert.same({}, z.shape) -- a 0-d array
    assert_same_bytes(ref.z, z, "beta 0-d")
    assert_same_bytes(ref.big, dl.random.default_rng(2):poisson(20, { 300, 300 }),
                      "poisson 300x300")
  end)

  it("refuse NumPy's invalid parameters with VALUE, wrong types with ARGUMENT", function()
    local rng = dl.random.default_rng(0)
    local before = rng:state()
    expect_code("VALUE", rng.exponential, rng, -1)
    local zero = 0.0 -- a float: -zero is -0.0 (an integer 0 has no sign)
    -- -0.0 is refused, as NumPy's signbit check does (made at run time: Lua 5.1
    -- folds the literal -0.0 into 0)
    expect_code("VALUE", rng.exponential, rng, -zero, 3)
    expect_code("VALUE", rng.poisson, rng, -1)
    expect_code("VALUE", rng.poisson, rng, 0 / 0)
    expect_code("VALUE", rng.poisson, rng, 1e19) -- above poisson_lam_max
    expect_code("VALUE", rng.binomial, rng, 10, 1.5)
    expect_code("VALUE", rng.binomial, rng, 10, -0.1)
    expect_code("VALUE", rng.binomial, rng, -1, 0.5)
    expect_code("ARGUMENT", rng.binomial, rng, 2.5, 0.5)
    expect_code("ARGUMENT", rng.binomial, rng, 10)
    expect_code("VALUE", rng.gamma, rng, -1)
    expect_code("VALUE", rng.gamma, rng, 1, -2)
    expect_code("ARGUMENT", rng.gamma, rng)
    expect_code("VALUE", rng.beta, rng, 0, 1)
    expect_code("VALUE", rng.beta, rng, 1, -1)
    expect_code("ARGUMENT", rng.beta, rng, 1)
    expect_code("VALUE", rng.choice, rng, 0)          -- empty population, one sample
    expect_code("VALUE", rng.choice, rng, dl.zeros(0), 3)
    expect_code("VALUE", rng.choice, rng, 3, 4, { replace = false })
    expect_code("VALUE", rng.choice, rng, 3, 2, { p = { 0.5, 0.5 } })       -- length
    expect_code("VALUE", rng.choice, rng, 2, 2, { p = { 0.5, 0.6 } })       -- sum
    expect_code("VALUE", rng.choice, rng, 2, 2, { p = { 1.5, -0.5 } })      -- negative
    expect_code("VALUE", rng.choice, rng, 2, 2, { p = { 0 / 0, 1 } })       -- NaN
    expect_code("VALUE", rng.choice, rng, 2, 2, { p = dl.ones(1, 2) / 2 })  -- not 1-d
    expect_code("VALUE", rng.choice, rng, 3, 2, { replace = false, p = { 1, 0, 0 } })
    expect_code("ARGUMENT", rng.choice, rng, 2.5)
    expect_code("ARGUMENT", rng.choice, rng, "abc")
    expect_code("ARGUMENT", rng.choice, rng, dl.array(3))
    expect_code("ARGUMENT", rng.choice, rng, 3, 2, { replce = false })
    expect_code("ARGUMENT", rng.exponential, rng, 1, 2, 3)
    assert.same(before, rng:state()) -- a refused call draws nothing
  end)

  it("takes p's sum within sqrt(eps), of float32 for a float32 array, as NumPy", function()
    local rng = dl.random.default_rng(0)
    assert.same({ 5 }, rng:choice(3, 5, { p = { 0.2, 0.3, 0.5 + 1e-9 } }).shape)
    expect_code("VALUE", rng.choice, rng, 3, 5, { p = { 0.2, 0.3, 0.5 + 1e-4 } })
    local p32 = dl.array({ 0.2, 0.3, 0.5 + 1e-4 }, { dtype = "float32" })
    assert.same({ 5 }, rng:choice(3, 5, { p = p32 }).shape)
  end)

  it("NumPy refuses the same parameters", function()
    local r = numpy_results{
      { key = "lam", seed = 0, expr = "rng.poisson(1e19)" },
      { key = "p", seed = 0, expr = "rng.binomial(10, 1.5)" },
      { key = "ch", seed = 0, expr = "rng.choice(0)" },
      { key = "sum", seed = 0, expr = "rng.choice(2, 2, p=[0.5, 0.6])" },
    }
    for key, v in pairs(r) do assert.equal("!", v:sub(1, 1), key) end
  end)
end)

describe("generator state", function()
  it("is NumPy's bit_generator.state, 128-bit values as hex strings", function()
    local rng = dl.random.default_rng(12345)
    rng:random(3, { dtype = "float32" }) -- leaves a 32-bit half buffered
    local expr = "(lambda s: ('%032x %032x %d %d' % (s['state']['state'], s['state']['inc'], " ..
                 "s['has_uint32'], s['uinteger'])))((rng.random(3, dtype=np.float32), " ..
                 "rng.bit_generator.state)[1])"
    local ref = from_hex(numpy_results{ { key = "st", seed = 12345, expr = expr } }.st)
    local s = rng:state()
    assert.equal("PCG64", s.bit_generator)
    assert.equal(1, s.has_uint32)
    assert.equal(ref, string.format("%s %s %d %d", s.state.state:sub(3), s.state.inc:sub(3),
                                    s.has_uint32, s.uinteger))
  end)

  it("round-trips: from_state(rng:state()) continues where rng is", function()
    local rng = dl.random.default_rng(99)
    rng:random(5, { dtype = "float32" })
    local copy = dl.random.from_state(rng:state())
    assert.same(rng:random(7, { dtype = "float32" }):totable(),
                copy:random(7, { dtype = "float32" }):totable())
    assert.same(rng:standard_normal(100):totable(), copy:standard_normal(100):totable())
  end)

  it("accepts a state NumPy printed, and continues as NumPy does", function()
    local expr = "'%032x %032x' % (rng.bit_generator.state['state']['state'], " ..
                 "rng.bit_generator.state['state']['inc'])"
    local r = numpy_results{ { key = "s", seed = 5, expr = expr },
                             { key = "next", seed = 5, expr = "rng.random(4)" } }
    local st, inc = from_hex(r.s):match("(%x+) (%x+)")
    local rng = dl.random.from_state{ bit_generator = "PCG64",
                                      state = { state = "0x" .. st, inc = "0x" .. inc },
                                      has_uint32 = 0, uinteger = 0 }
    assert_same_bytes(r.next, rng:random(4), "random after from_state")
  end)

  it("rejects a state that is not PCG64's", function()
    local good = dl.random.default_rng(1):state()
    expect_code("ARGUMENT", dl.random.from_state, "PCG64")
    expect_code("VALUE", dl.random.from_state, { bit_generator = "MT19937", state = good.state,
                                                 has_uint32 = 0, uinteger = 0 })
    expect_code("VALUE", dl.random.from_state, { bit_generator = "PCG64",
                                                 state = { state = "0xzz", inc = "0x1" },
                                                 has_uint32 = 0, uinteger = 0 })
    expect_code("VALUE", dl.random.from_state, { bit_generator = "PCG64", state = good.state,
                                                 has_uint32 = 2, uinteger = 0 })
    expect_code("ARGUMENT", dl.random.from_state, { bit_generator = "PCG64", state = good.state,
                                                    has_uint32 = 0, uinteger = 0, extra = 1 })
  end)
end)

describe("rng:spawn", function()
  it("gives the children of NumPy's SeedSequence.spawn, and grandchildren", function()
    local expr = "np.concatenate([np.random.default_rng(c).random(3) for c in " ..
                 "rng.bit_generator._seed_seq.spawn(3)] + [np.random.default_rng(g).random(3) " ..
                 "for g in rng.bit_generator._seed_seq.spawn(1)[0].spawn(2)])"
    for _, seed in ipairs(SEEDS) do
      local ref = numpy_results{ { key = "k", seed = seed, expr = expr } }.k
      local rng = dl.random.default_rng(seed)
      local parts = {}
      for _, child in ipairs(rng:spawn(3)) do parts[#parts + 1] = child:random(3) end
      for _, grandchild in ipairs(rng:spawn(1)[1]:spawn(2)) do
        parts[#parts + 1] = grandchild:random(3)
      end
      assert_same_bytes(ref, dl.concat(parts), "spawn, seed " .. tostring(seed))
    end
  end)

  it("needs a seed sequence: a generator made from a state cannot spawn", function()
    local rng = dl.random.from_state(dl.random.default_rng(1):state())
    expect_code("VALUE", rng.spawn, rng, 2)
    expect_code("ARGUMENT", dl.random.default_rng(1).spawn, dl.random.default_rng(1), -1)
  end)
end)

describe("rng:shuffle and rng:permutation", function()
  it("shuffle reorders in place along dim 1; permutation copies", function()
    local rng = dl.random.default_rng(8)
    local a = dl.arange(12):view(4, 3)
    local p = rng:permutation(a)
    assert.same({ 4, 3 }, p.shape)
    assert.same({ 0, 1, 2 }, a:totable()[1]) -- a is unchanged
    for _, row in ipairs(p:totable()) do assert.equal(row[1] + 1, row[2]) end
    rng:shuffle(a)
    for _, row in ipairs(a:totable()) do assert.equal(row[1] + 2, row[3]) end
  end)

  it("shuffles a strided view in place", function()
    local ref = numpy_results{ { key = "v", seed = 4,
      expr = "(lambda b: (rng.shuffle(b[::2]), b)[1])(np.arange(20))" } }.v
    local b = dl.arange(20)
    dl.random.default_rng(4):shuffle(b:slice(1, 1, 20, 2))
    assert_same_bytes(ref, b, "shuffle of b[::2]")
  end)

  it("refuses read-only, deleted and 0-d arrays, and a negative n", function()
    local rng = dl.random.default_rng(0)
    expect_code("READ_ONLY", rng.shuffle, rng, support.readonly_array())
    local gone = dl.zeros(3)
    gone:delete()
    expect_code("DELETED", rng.shuffle, rng, gone)
    expect_code("SHAPE", rng.shuffle, rng, dl.array(1))
    expect_code("VALUE", rng.permutation, rng, -1)
    assert.same({}, rng:permutation(0):totable())
  end)

  it("shuffles an empty array as a no-op, as NumPy: no draw is made", function()
    local rng = dl.random.default_rng(9)
    local before = rng:state()
    local empty, rows = dl.zeros(0), dl.zeros{5, 0} -- rows has five rows, all empty
    rng:shuffle(empty)
    rng:shuffle(rows)
    rng:shuffle(dl.zeros{0, 3})
    assert.same({ 0 }, empty.shape)
    assert.same({ 5, 0 }, rows.shape)
    assert.same(before, rng:state()) -- the generator moved on by nothing
    assert.same({ 5, 0 }, rng:permutation(rows).shape)
    -- A read-only array is still refused, empty or not (NumPy: "array is read-only").
    expect_code("READ_ONLY", rng.shuffle, rng, dl.zeros(0):view{1, 0}:expand{3, 0})
  end)
end)

describe("dl.random and the generators' metatable", function()
  it("are read-only: no script can change them for the others", function()
    local rng = dl.random.default_rng(0)
    expect_code("READ_ONLY", function() dl.random.default_rng = print end)
    expect_code("READ_ONLY", function() getmetatable(rng).__index = nil end)
    expect_code("READ_ONLY", function() getmetatable(rng).__index.random = print end)
    assert.is_false(pcall(setmetatable, rng, nil))
    assert.is_number(rng:random()) -- the generator still works
    assert.is_function(dl.random.default_rng)
    assert.is_function(dl.random.from_state)
    -- (that these two are all, counted with pairs: spec/lua53/random_spec.lua)
  end)
end)

describe("bad arguments", function()
  it("raise a dlbridge.Error with a code and a hint", function()
    local rng = dl.random.default_rng(0)
    local function check(code, f, ...)
      local err = expect_code(code, f, ...)
      assert.is_string(err.hint)
      assert.is_true(#err.hint > 0)
    end
    check("VALUE", dl.random.default_rng, -1)           -- a negative seed
    check("ARGUMENT", dl.random.default_rng, 1.5)       -- a float seed
    check("ARGUMENT", dl.random.default_rng, "12")      -- a string must be hex
    check("ARGUMENT", dl.random.default_rng, { 1, { 2 } })
    check("VALUE", rng.integers, rng, 5, 5)             -- hi <= lo
    check("VALUE", rng.integers, rng, 5, 4, nil, { endpoint = true })
    check("VALUE", rng.integers, rng, 0, 300, 3, { dtype = "uint8" }) -- out of the dtype
    check("VALUE", rng.integers, rng, -1, 3, 3, { dtype = "uint8" })
    check("DTYPE", rng.integers, rng, 0, 3, 3, { dtype = "float64" })
    check("DTYPE", rng.random, rng, 3, { dtype = "int32" })
    check("DTYPE", rng.standard_normal, rng, 3, { dtype = "float16" })
    check("DTYPE", rng.random, rng, 3, { dtype = "nope" })
    check("ARGUMENT", rng.random, rng, 3, { dtype = "float32", device = "cpu" })
    check("ARGUMENT", rng.integers, rng, 1.5, 3)
    check("SHAPE", rng.random, rng, -3)
    check("SHAPE", rng.random, rng, { 2, -1 })
    check("ARGUMENT", rng.random, rng, "3")
    check("VALUE", rng.normal, rng, 0, -1, 3)           -- a negative scale
    check("VALUE", rng.uniform, rng, -math.huge, 0, 3)
    check("ARGUMENT", rng.random, {}, 3)                 -- not a generator
    check("ARGUMENT", rng.random, rng, 3, {}, 4)         -- one argument too many
    check("ARGUMENT", rng.integers, rng, 0, 3, 3, {}, 1)
  end)

  it("keeps the generator as it was when a call fails", function()
    local a, b = dl.random.default_rng(3), dl.random.default_rng(3)
    pcall(a.integers, a, 5, 5, 10)
    assert.equal(b:random(), a:random())
  end)
end)
