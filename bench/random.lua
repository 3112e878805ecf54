-- bench/random.lua: draws of 1e7 numbers from dl.random.default_rng(12345)
-- against NumPy's Generator (bench/random_numpy.py: the same calls, so the
-- same numbers), alternated case by case (bench/support.lua). Each call
-- allocates its result on both sides. Each figure is the median of ROUNDS
-- rounds of CPU time; the issue's goal (issue 25) is random float64 and
-- standard_normal float64 at or below NumPy (ratio <= 1.00).
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_QUICK=1 draws 1e6.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(5)
local N = support.size(10000000, 1000000)

local rng = dl.random.default_rng(12345)
local CASES = {
  {"random_float64", function() return rng:random(N) end, 1.0},
  {"random_float32", function() return rng:random(N, {dtype = "float32"}) end},
  {"standard_normal_float64", function() return rng:standard_normal(N) end, 1.0},
  {"standard_normal_float32", function() return rng:standard_normal(N, {dtype = "float32"}) end},
  {"normal", function() return rng:normal(3.0, 2.0, N) end},
  {"uniform", function() return rng:uniform(-1.0, 1.0, N) end},
  {"integers_int64", function() return rng:integers(0, 1000, N) end},
  {"integers_int32", function() return rng:integers(0, 1000, N, {dtype = "int32"}) end},
  {"permutation", function() return rng:permutation(N) end},
  -- issue 35: the goal is NumPy's speed (ratio <= 1.00) for each
  {"exponential", function() return rng:exponential(2.0, N) end, 1.0},
  {"gamma_0.5", function() return rng:gamma(0.5, 1.0, N) end, 1.0},
  {"gamma_3", function() return rng:gamma(3.0, 1.0, N) end, 1.0},
  {"beta_0.5_0.5", function() return rng:beta(0.5, 0.5, N) end, 1.0},
  {"beta_2_5", function() return rng:beta(2.0, 5.0, N) end, 1.0},
  {"poisson_4", function() return rng:poisson(4.0, N) end, 1.0},
  {"poisson_100", function() return rng:poisson(100.0, N) end, 1.0},
  {"binomial_20_0.5", function() return rng:binomial(20, 0.5, N) end, 1.0},
  {"binomial_1000_0.3", function() return rng:binomial(1000, 0.3, N) end, 1.0},
  {"choice_n", function() return rng:choice(1000, N) end, 1.0},
  {"choice_p", function() return rng:choice(5, N, {p = {0.1, 0.2, 0.3, 0.3, 0.1}}) end, 1.0},
  {"choice_no_replace", function() return rng:choice(N, math.floor(N / 10), {replace = false}) end, 1.0},
}

local cmp = support.comparison{script = "random_numpy.py", args = {N = N}, rounds = ROUNDS,
                               width = 26}
print(string.format("dlbridge %s, %d draws, median of %d rounds (CPU time)", dl.version, N,
                    ROUNDS))
cmp:header()
for _, case in ipairs(CASES) do
  local f = case[2]
  cmp:row{name = case[1], f = function() f():delete() end, target = case[3]}
end
cmp:finish()
