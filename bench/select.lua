-- bench/select.lua: selecting, sorting, scanning and counting on float32 data
-- (1e7 elements unless named), single-threaded, against NumPy in the same run
-- (bench/select_numpy.py: the same formulas, so the same values). Each figure
-- is the median of ROUNDS rounds of CPU time; the ratio is dlbridge / NumPy
-- (below 1: dlbridge is faster). BENCH_ROUNDS sets the rounds (default 3).
-- Data: x = frac(i * g) (random-looking, few ties), sorted x, a mask of
-- x < 0.5, indices frac(i * g2) * n, integers frac(i * g) * 1000.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 3
local N = 10000000
local G, G2 = 0.6180339887498949, 0.7548776662466927

local i = dl.arange(N, {dtype = "float64"})
local x = (i * G % 1.0):astype("float32")
local sorted = x:sort()
local mask = x:lt(0.5)
local idx = ((i * G2 % 1.0) * N):astype("int64") + 1
local ints = ((i * G % 1.0) * 1000):astype("int64")
local rows = x:slice(1, 1, 8000):reshape{8, 1000}
local coarse = ((i * G % 1.0) * 100000):floor():astype("float32")
i = nil

local cases = {
  {"mask_read", function() return x[mask] end},
  {"mask_write", function() local y = dl.array(x); y[mask] = 0; return y end, "copy"},
  {"take", function() return x:take(idx) end},
  {"sort_random", function() return x:sort() end},
  {"sort_sorted", function() return sorted:sort() end},
  {"argsort_random", function() return x:argsort() end},
  {"argsort_sorted", function() return sorted:argsort() end},
  {"topk5_rows_x1000", function() for _ = 1, 1000 do dl.topk(rows, 5) end end},
  {"topk5_1e7", function() return dl.topk(x, 5) end},
  {"cumsum", function() return x:cumsum() end},
  {"bincount", function() return dl.bincount(ints) end},
  {"histogram16", function() return dl.histogram(x, {bins = 16}) end},
  {"unique", function() return dl.unique(coarse) end},
}

local copy_time = support.median_time(function() return dl.array(x) end, ROUNDS)
local numpy = support.numpy_figures("select_numpy.py", tostring(ROUNDS))
print(string.format("dlbridge %s, float32 data of %d elements, median of %d rounds (CPU time)",
                    dl.version, N, ROUNDS))
print(string.format("%-18s %12s %12s %8s", "operation", "dlbridge ms", "NumPy ms", "ratio"))
for _, c in ipairs(cases) do
  local name, f, note = c[1], c[2], c[3]
  local t = support.median_time(f, ROUNDS)
  if note == "copy" then t = t - copy_time end -- (both sides time the write alone)
  local np_t = numpy[name]
  print(string.format("%-18s %12.2f %12s %8s", name, t * 1e3,
                      np_t and string.format("%.2f", np_t * 1e3) or "-",
                      np_t and string.format("%.2f", t / np_t) or "-"))
end
