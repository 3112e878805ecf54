-- bench/bulk.lua: bulk data at memory speed (issue 8). Each figure is the
-- median of ROUNDS rounds of CPU time (os.clock: page faults count), with its
-- spread, against NumPy (bench/bulk_numpy.py under /usr/bin/python3,
-- Debian's python3-numpy) alternated case by case (bench/support.lua), or
-- against memcpy (bench_floor.memcpy).
-- Targets: zeros, empty+fill, copy, fill, astype (every pair, contiguous and
-- strided) <= 1.0x NumPy; 2,000 arrays of 8 MiB made and filled without delete
-- <= 1.0x NumPy with peak RSS <= 300 MiB; transpose-copy 4096^2 float32 <= 0.3x
-- NumPy; contiguous copy into an existing array >= 0.9x memcpy's speed.
-- Each case makes its data when it starts and drops it when done, on both
-- sides, so that the peak RSS of the loop counts the loop's own memory.
-- BENCH_ROUNDS sets the rounds (default 5; the loop of 2,000 arrays takes at
-- most 3, the pair table three times as many); BENCH_PAIRS=0 skips the
-- astype pair table; BENCH_QUICK=1 cuts the sizes.
local dl = require "dlbridge"
local floor = require "bench_floor"
local support = require "support"

local ROUNDS = support.rounds(5)
local PAIRS = os.getenv("BENCH_PAIRS") ~= "0"
local PAIR_ROUNDS = 3 * ROUNDS -- the pairs take well under a millisecond: more rounds, less noise
local BIG = support.size(32 * 1024 * 1024, 4 * 1024 * 1024) -- float64 elements: 256 MiB
local N = support.size(10000000, 1000000)
local LOOP = support.size(2000, 200) -- arrays of 8 MiB
local SIDE = support.size(4096, 1024) -- the transposed square (float32)
local PAIRS_N = support.size(1000000, 100000)
local DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"}
local MiB = 1024 * 1024

local cmp = support.comparison{script = "bulk_numpy.py", rounds = ROUNDS, width = 40,
                               args = {BIG = BIG, N = N, LOOP = LOOP, SIDE = SIDE,
                                       PAIRS_N = PAIRS_N, PAIRS = PAIRS and 1 or 0}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time)", dl.version, _VERSION,
                    ROUNDS))
cmp:header()

local function row(name, label, make, target, opts)
  local c = opts or {}
  c.name, c.label, c.make, c.target = name, label, make, target
  return cmp:row(c)
end

local big_mib = BIG * 8 / MiB
row("zeros_256MiB", string.format("dl.zeros %g MiB (mean of 20)", big_mib), function()
  return function() dl.zeros{BIG}:delete() end
end, 1.0, {reps = 20})
-- What the advice on zeroed blocks buys (it costs some of the unmap above):
-- the first touch of a fresh dl.zeros, here a fill.
row("zeros_fill_64MiB", string.format("dl.zeros %g MiB + its first fill", big_mib / 4), function()
  return function() dl.zeros{BIG // 4}:fill(1.5):delete() end
end)
row("empty_fill_256MiB", string.format("dl.empty + fill %g MiB", big_mib), function()
  return function() dl.empty{BIG}:fill(1.5):delete() end
end, 1.0)
row("copy_256MiB", string.format("a:copy() %g MiB", big_mib), function()
  local full = dl.ones{BIG}
  return function() full:copy():delete() end
end, 1.0)
row("fill_1e7", "a:fill(v) " .. support.count(N) .. " float64", function()
  local v = dl.empty{N}
  return function() v:fill(2.5) end
end, 1.0)

-- The loop, without delete: the collector frees the arrays. The growth of
-- its peak RSS on both sides (VmHWM - VmRSS, the peak reset when the case
-- starts: no warm-up), and our peak RSS itself (target <= 300 MiB).
local rss_before
local loop = row("loop_2000x8MiB", string.format("%d x (empty 8 MiB + fill), no delete", LOOP),
                 function()
                   collectgarbage("collect")
                   support.reset_peak_rss()
                   rss_before = support.rss()
                   return function()
                     for _ = 1, LOOP do
                       local c = dl.empty{MiB}
                       c:fill(1.0)
                     end
                   end
                 end, 1.0, {rounds = math.min(ROUNDS, 3), warmups = 0})
local peak = support.peak_rss()
local their_growth = tonumber(cmp:value("loop_peak_rss_growth") or "")
if loop.ours_median and peak and rss_before then
  cmp:figure{label = string.format("peak RSS growth, the %d x 8 MiB loop", LOOP), unit = "MiB",
             ours = (peak - rss_before) / MiB, numpy = their_growth and their_growth / MiB,
             note = string.format("(our peak RSS %.0f MiB: target <= 300 MiB)", peak / MiB)}
end

row("transpose_contiguous", string.format("a:transpose():contiguous() %d^2 f32", SIDE), function()
  local sq = dl.ones({SIDE, SIDE}, {dtype = "float32"})
  return function() sq:transpose():contiguous():delete() end
end, 0.3)
row("transpose_copy_from", string.format("b:copy_from(a:transpose()) %d^2 f32", SIDE), function()
  local sq = dl.ones({SIDE, SIDE}, {dtype = "float32"})
  local dst = dl.empty({SIDE, SIDE}, {dtype = "float32"})
  return function() dst:copy_from(sq:transpose()) end
end, 0.3)
row("astype_f64_f32", "a:astype('float32') " .. support.count(N) .. " float64", function()
  local src64 = dl.ones{N}
  return function() src64:astype("float32"):delete() end
end, 1.0)

-- Against memcpy (no NumPy side): a contiguous copy into an existing array.
do
  local sq = dl.ones({SIDE, SIDE}, {dtype = "float32"})
  local dst = dl.empty({SIDE, SIDE}, {dtype = "float32"})
  local reps = 5
  local copies, memcpys = {}, {}
  dst:copy_from(sq)
  for r = 1, ROUNDS do -- alternated round by round
    local t0 = os.clock()
    for _ = 1, reps do dst:copy_from(sq) end
    copies[r] = (os.clock() - t0) / reps
    -- floor.memcpy times its copies itself (not its allocation and first touch).
    memcpys[r] = floor.memcpy(sq.nbytes, reps) / reps
  end
  local copy, memcpy = support.median(copies), support.median(memcpys)
  print(string.format("%-40s %8.3f ms   memcpy %8.3f ms   speed %5.2fx memcpy  (target >= 0.9x)",
                      string.format("b:copy_from(a) %g MiB, contiguous", sq.nbytes / MiB),
                      copy * 1e3, memcpy * 1e3, memcpy / copy))
  sq:delete()
  dst:delete()
end

if PAIRS then
  -- Source dtype s into every dtype d, contiguous and strided (every other
  -- element): each pair NumPy's rounds alternated with ours. Only the worst
  -- are printed here; bench/run's summary counts them all (group "astype").
  local results = {}
  for _, s in ipairs(DTYPES) do
    local a = dl.ones({PAIRS_N}, {dtype = s})
    local strided = dl.ones({2 * PAIRS_N}, {dtype = s}):slice(1, 1, -1, 2)
    for _, d in ipairs(DTYPES) do
      for _, kind in ipairs{"", "strided_"} do
        local src = kind == "" and a or strided
        local r = cmp:measure{name = "astype_" .. kind .. s .. "_" .. d,
                              label = "astype " .. s .. (kind == "" and "" or " (strided)")
                                      .. " -> " .. d,
                              f = function() src:astype(d):delete() end, rounds = PAIR_ROUNDS}
        r.group = "astype pairs"
        results[#results + 1] = r
      end
    end
    a:delete()
    strided:delete()
  end
  local rows, met = {}, 0
  for _, r in ipairs(results) do
    if r.ratio then
      rows[#rows + 1] = r
      if r.ratio <= 1.0 then met = met + 1 end
    end
  end
  table.sort(rows, function(x, y) return x.ratio > y.ratio end)
  print(string.format("astype, every pair of %d dtypes x {contiguous, strided}, %s elements, "
                      .. "median of %d rounds: %d of %d pairs <= 1.0x NumPy; the worst:", #DTYPES,
                      support.count(PAIRS_N), PAIR_ROUNDS, met, #rows))
  for i = 1, math.min(8, #rows) do cmp:print(rows[i]) end
end
cmp:finish()
