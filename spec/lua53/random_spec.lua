-- Lua 5.3 and later: dl.random with Lua's integer subtype and whole int64 range.
--
-- Without a shape a draw returns one Lua number, an integer or a float as
-- NumPy returns an int64 or a float64 scalar; rng:integers takes the whole
-- int64 range, math.mininteger to math.maxinteger; and pairs walks the
-- read-only dl.random. Lua 5.1, 5.2 and LuaJIT have one number type and
-- LuaJIT and 5.1 no __pairs: spec/random_spec.lua holds everything else.
local dl = require "dlbridge"
local numpy = require "numpy_draws"

local N = numpy.N
local SEEDS = { 0, 1, 12345, "0x9b4e7a11c2d35f0884e6a7b3c1d2e0f5" }

describe("dl.random.default_rng", function()
  it("draws NumPy's numbers: integers, the whole int64 range", function()
    local expr = "rng.integers(-2**63, 2**63 - 1, size=N, endpoint=True)"
    local requests = {}
    for s, seed in ipairs(SEEDS) do requests[s] = { key = tostring(s), seed = seed, expr = expr } end
    local expected = numpy.numpy_results(requests)
    for s, seed in ipairs(SEEDS) do
      local got = dl.random.default_rng(seed):integers(math.mininteger, math.maxinteger, N,
                                                       { endpoint = true })
      numpy.assert_same_bytes(expected[tostring(s)], got, "the whole int64 range, seed " .. tostring(seed))
    end
  end)

  it("draws NumPy's numbers: integers uint64, a 62-bit range", function()
    local expr = "rng.integers(0, 2**62, size=N, dtype=np.uint64)"
    local requests = {}
    for s, seed in ipairs(SEEDS) do requests[s] = { key = tostring(s), seed = seed, expr = expr } end
    local expected = numpy.numpy_results(requests)
    for s, seed in ipairs(SEEDS) do
      local got = dl.random.default_rng(seed):integers(0, 1 << 62, N, { dtype = "uint64" })
      numpy.assert_same_bytes(expected[tostring(s)], got, "uint64, seed " .. tostring(seed))
    end
  end)

  it("returns one Lua number without a shape, as NumPy returns a scalar", function()
    local rng = dl.random.default_rng(42)
    assert.equal("float", math.type(rng:random()))
    assert.equal("integer", math.type(rng:integers(10)))
    assert.equal("float", math.type(rng:standard_normal()))
    assert.equal("float", math.type(rng:normal()))
    assert.equal("float", math.type(rng:uniform()))
  end)

  it("draws fresh entropy without a seed", function()
    local a, b = dl.random.default_rng(), dl.random.default_rng()
    assert.are_not.equal(a:integers(math.mininteger, math.maxinteger),
                         b:integers(math.mininteger, math.maxinteger))
  end)
end)

describe("dl.random and the generators' metatable", function()
  it("are read-only, and pairs walks dl.random's two functions", function()
    local rng = dl.random.default_rng(0)
    assert.equal("float", math.type(rng:random()))
    local names = {}
    for k in pairs(dl.random) do names[#names + 1] = k end
    table.sort(names)
    assert.same({ "default_rng", "from_state" }, names)
  end)
end)
