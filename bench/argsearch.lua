-- bench/argsearch.lua: argmax of 1e7 elements, by dtype, data and layout,
-- against NumPy's (bench/argsearch_numpy.py: the same formulas, so the same
-- values), alternated case by case (bench/support.lua). Each figure is the
-- median of ROUNDS rounds of CPU time. Data: "random" (the fractional parts
-- of i * g scaled to the dtype), "ascending" (every element a new maximum or
-- a tie: the worst case of a search that skips blocks holding nothing
-- better), "equal" (all zero: the first index), "nan last" (random, the last
-- element NaN). Layout: contiguous, or every second element of twice as
-- many (NumPy copies such an input before it searches). Each case makes its
-- data when it starts and drops it when done, on both sides.
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_QUICK=1 searches 1e6.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(5)
local N = support.size(10000000, 1000000)
local G = 0.6180339887498949

-- Half the range of each integer dtype the data spans (int64: 2^62, so the
-- float64 formulas stay inside it).
local HALF = {int8 = 2.0 ^ 7, int32 = 2.0 ^ 31, int64 = 2.0 ^ 62}

-- n elements of dtype t with pattern `data`.
local function make(t, data, n)
  local x
  if data == "equal" then return dl.zeros({n}, {dtype = t}) end
  if data == "ascending" then
    x = dl.arange(n, {dtype = "float64"}) / n
  else
    x = dl.arange(n, {dtype = "float64"}) * G % 1.0
  end
  if HALF[t] then x = x * (2 * HALF[t]) - HALF[t] end
  x = x:astype(t)
  if data == "nan last" then x[n] = 0 / 0 end
  return x
end

local cmp = support.comparison{script = "argsearch_numpy.py", args = {N = N}, rounds = ROUNDS,
                               width = 34}
print(string.format("dlbridge %s, argmax of %d elements, median of %d rounds (CPU time)",
                    dl.version, N, ROUNDS))
cmp:header()
for _, t in ipairs{"float32", "float64", "int8", "int32", "int64"} do
  for _, data in ipairs{"random", "ascending", "equal", "nan last"} do
    if data ~= "nan last" or not HALF[t] then
      for _, step in ipairs{1, 2} do
        cmp:row{name = string.format("%s_%s_%d", t, data:gsub(" ", "_"), step),
                label = string.format("argmax %s %s, stride %d", t, data, step),
                make = function()
                  local x = make(t, data, N * step)
                  if step == 2 then x = x:slice(1, 1, -1, 2) end
                  if data == "nan last" and step == 2 then x[N] = 0 / 0 end
                  return function() x:argmax() end
                end}
      end
    end
  end
end
cmp:finish()
