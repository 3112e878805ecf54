-- bench/random.lua: draws of 1e7 numbers from dl.random.default_rng(12345)
-- against NumPy's Generator in the same run (bench/random_numpy.py: the same
-- calls, so the same numbers). Each call allocates its result on both sides.
-- Each figure is the median of ROUNDS rounds of CPU time; the issue's goal
-- (issue 25) is random float64 and standard_normal float64 at or below
-- NumPy (ratio <= 1.00). BENCH_ROUNDS sets the rounds (default 5).
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local N = 10000000

local rng = dl.random.default_rng(12345)
local CASES = {
  {"random_float64", function() return rng:random(N) end},
  {"random_float32", function() return rng:random(N, {dtype = "float32"}) end},
  {"standard_normal_float64", function() return rng:standard_normal(N) end},
  {"standard_normal_float32", function() return rng:standard_normal(N, {dtype = "float32"}) end},
  {"normal", function() return rng:normal(3.0, 2.0, N) end},
  {"uniform", function() return rng:uniform(-1.0, 1.0, N) end},
  {"integers_int64", function() return rng:integers(0, 1000, N) end},
  {"integers_int32", function() return rng:integers(0, 1000, N, {dtype = "int32"}) end},
  {"permutation", function() return rng:permutation(N) end},
}

local numpy = support.numpy_figures("random_numpy.py", tostring(ROUNDS))
print(string.format("dlbridge %s, %d draws, median of %d rounds (CPU time)", dl.version, N,
                    ROUNDS))
for _, case in ipairs(CASES) do
  local name, f = case[1], case[2]
  local seconds = support.median_time(function() local a = f(); a:delete() end, ROUNDS)
  local base = numpy[name]
  print(string.format("%-24s %8.2f ms   NumPy %8.2f ms   ratio %5.2fx", name, seconds * 1e3,
                      (base or 0) * 1e3, base and seconds / base or 0))
end
