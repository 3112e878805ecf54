-- bench/select.lua: selecting, sorting, scanning and counting (1e7 elements
-- unless named), single-threaded, against NumPy (bench/select_numpy.py: the
-- same formulas, so the same values), alternated case by case
-- (bench/support.lua). Each figure is the median of ROUNDS rounds of CPU
-- time; the ratio is dlbridge / NumPy (below 1: dlbridge is faster).
-- Data: x = frac(i * g) float32 (random-looking, few ties), sorted x, a
-- mask of x < 0.5, indices frac(i * g2) * n, integers frac(i * g) * 1000
-- (int64, and int32 for bincount), int32 over their whole range
-- (frac(i * g2) * 2^32 - 2^31).
-- Then the peak memory of x:argsort() an element, each side in a fresh
-- process, its data made in small blocks (so that argsort's is the peak):
-- dl.memory().peak against NumPy's tracemalloc peak, and the growth of the
-- peak RSS on both sides (Linux's VmHWM, reset through /proc/self/clear_refs).
-- BENCH_ROUNDS sets the rounds (default 3); BENCH_QUICK=1 uses 1e6 elements.
local dl = require "dlbridge"
local support = require "support"

local G, G2 = 0.6180339887498949, 0.7548776662466927

-- The quasi-random float32 x = frac(i * g) of n elements, made a block at a
-- time (no temporaries of n elements).
local function blocks(n)
  local x = dl.empty({n}, {dtype = "float32"})
  local B = 65536
  for s = 0, n - 1, B do
    local len = math.min(B, n - s)
    x:narrow(1, s + 1, len):copy_from((dl.arange(s, s + len, {dtype = "float64"}) * G % 1.0)
                                      :astype("float32"))
  end
  return x
end

-- In a fresh process (`select.lua argsort-memory N`): prints the peak bytes
-- x:argsort() held beyond x (dl.memory) and the growth of the peak RSS.
if arg[1] == "argsort-memory" then
  local n = tonumber(arg[2])
  local x = blocks(n)
  collectgarbage("collect")
  local before = dl.memory().in_use
  support.reset_peak_rss()
  local rss_before = support.peak_rss()
  local idx = x:argsort()
  local rss = support.peak_rss()
  io.write(string.format("%d %d %d\n", dl.memory().peak - before, rss and rss - rss_before or -1,
                         idx.size))
  return
end

local ROUNDS = support.rounds(3)
local N = support.size(10000000, 1000000)
local SMALL_BINS = support.size(1000000, 100000) -- the smaller bincount

local i = dl.arange(N, {dtype = "float64"})
local x = (i * G % 1.0):astype("float32")
local sorted = x:sort()
local mask = x:lt(0.5)
local idx = ((i * G2 % 1.0) * N):astype("int64") + 1
local ints = ((i * G % 1.0) * 1000):astype("int64")
local ints32 = ints:astype("int32")
local ints32_small = ints32:narrow(1, 1, SMALL_BINS):copy()
local wide32 = (i * G2 % 1.0 * 2 ^ 32 - 2 ^ 31):floor():astype("int32")
local rows = x:slice(1, 1, 8000):reshape{8, 1000}
local coarse = ((i * G % 1.0) * 100000):floor():astype("float32")
i = nil
-- Sets and keys, 1e6 elements (SETS_N): members = floor(frac(j * g) * 2m)
-- float64 searched among m test values floor(frac(j * g2) * 2m) (about
-- half found; NumPy 1.24 sorts both together), the same as int64 for m =
-- 1e3 (NumPy takes a lookup table of the value range there); lexsort by an
-- int64 key of 1000 values, ties broken by a float64 one; unique's first
-- indices of 1e5 distinct float64.
local SETS_N = support.size(1000000, 100000)
local j = dl.arange(SETS_N, {dtype = "float64"})
local function members(m) return (j * G % 1.0 * 2 * m):floor() end
local function tests(m) return (dl.arange(m, {dtype = "float64"}) * G2 % 1.0 * 2 * m):floor() end
local members3, tests3 = members(1000), tests(1000)
local members5, tests5 = members(100000), tests(100000)
local members3_int, tests3_int = members3:astype("int64"), tests3:astype("int64")
local tiebreak, primary = j * G2 % 1.0, (j * G % 1.0 * 1000):floor():astype("int64")
local distinct5 = (j * G % 1.0 * 100000):floor()
j = nil

local cases = {
  {"mask_read", "x[mask] (half true)", function() return x[mask] end},
  -- each round writes into a fresh copy of x, made untimed
  {"mask_write", "y[mask] = 0 (half true)", function(y) y[mask] = 0 end,
   prepare = function() return dl.array(x) end},
  {"take", "x:take(idx) (random indices)", function() return x:take(idx) end},
  {"sort_random", "x:sort() float32, random", function() return x:sort() end},
  {"sort_sorted", "x:sort() float32, sorted", function() return sorted:sort() end},
  {"sort_int32", "x:sort() int32, random", function() return wide32:sort() end},
  {"argsort_random", "x:argsort() float32, random", function() return x:argsort() end},
  {"argsort_sorted", "x:argsort() float32, sorted", function() return sorted:argsort() end},
  {"topk5_rows_x1000", "dl.topk(rows, 5), (8, 1000), x1000",
   function() for _ = 1, 1000 do dl.topk(rows, 5) end end},
  {"topk5_1e7", "dl.topk(x, 5)", function() return dl.topk(x, 5) end},
  {"cumsum", "x:cumsum()", function() return x:cumsum() end},
  {"bincount", "dl.bincount(ints) int64 < 1000", function() return dl.bincount(ints) end},
  {"bincount_int32", "dl.bincount(ints) int32 < 1000", function() return dl.bincount(ints32) end},
  {"bincount_int32_small", "dl.bincount(ints) int32 < 1000, " .. support.count(SMALL_BINS),
   function() return dl.bincount(ints32_small) end},
  {"histogram16", "dl.histogram(x, {bins = 16})",
   function() return dl.histogram(x, {bins = 16}) end},
  {"unique", "dl.unique(x) float32, 1e5 distinct", function() return dl.unique(coarse) end},
  {"unique_random", "dl.unique(x) float32, random", function() return dl.unique(x) end},
  {"unique_int32", "dl.unique(x) int32, random", function() return dl.unique(wide32) end},
  {"isin_1e3", "dl.isin(1e6 f64, 1e3 values)", function() return dl.isin(members3, tests3) end},
  {"isin_1e5", "dl.isin(1e6 f64, 1e5 values)", function() return dl.isin(members5, tests5) end},
  {"isin_int_1e3", "dl.isin(1e6 int64, 1e3 values)",
   function() return dl.isin(members3_int, tests3_int) end},
  {"lexsort_2x1e6", "dl.lexsort{f64, int64} of 1e6", function() return dl.lexsort{tiebreak, primary} end},
  {"unique_index_1e6", "dl.unique(1e6 f64, {return_index})",
   function() return dl.unique(distinct5, {return_index = true}) end},
}

local cmp = support.comparison{script = "select_numpy.py",
                               args = {N = N, SMALL_BINS = SMALL_BINS, SETS_N = SETS_N},
                               rounds = ROUNDS, width = 40}
print(string.format("dlbridge %s, data of %d elements, median of %d rounds (CPU time)",
                    dl.version, N, ROUNDS))
cmp:header()
for _, c in ipairs(cases) do
  cmp:row{name = c[1], label = c[2], f = c[3], prepare = c.prepare}
end

-- Peak memory of argsort an element, each side in a fresh process.
local function first_line(command)
  local p = io.popen(command)
  local line = p and p:read("*l")
  if p then p:close() end
  return line or ""
end
local dl_bytes, rss_bytes = first_line(support.quote(arg[-1] or "lua5.4") .. " "
                                       .. support.quote(arg[0]) .. " argsort-memory " .. N)
                            :match("^(%-?%d+) (%-?%d+)")
local traced, their_rss = first_line("/usr/bin/python3 " .. support.quote(support.here()
                                     .. "/select_numpy.py") .. " mode=argsort-memory N=" .. N)
                          :match("^(%-?%d+) (%-?%d+)")
local function per(v) v = tonumber(v) return v and v >= 0 and v / N or nil end
cmp:figure{label = "x:argsort() peak bytes/element", unit = "B",
           ours = per(dl_bytes), numpy = per(traced),
           note = "(dl.memory().peak vs tracemalloc)"}
cmp:figure{label = "x:argsort() peak RSS growth/element", unit = "B",
           ours = per(rss_bytes), numpy = per(their_rss), note = "(VmHWM)"}
cmp:finish()
