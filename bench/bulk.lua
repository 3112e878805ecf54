-- bench/bulk.lua: bulk data at memory speed (issue 8). Each figure is the median
-- of ROUNDS rounds of CPU time (os.clock: page faults count), printed with the
-- baseline measured in the same run: NumPy (bench/bulk_numpy.py under
-- /usr/bin/python3, Debian's python3-numpy) or memcpy (bench_floor.memcpy).
-- Targets: zeros, empty+fill, copy, fill, astype (every pair, contiguous and
-- strided) <= 1.0x NumPy; 2,000 arrays of 8 MiB made and filled without delete
-- <= 1.0x NumPy with peak RSS <= 300 MiB; transpose-copy 4096^2 float32 <= 0.3x
-- NumPy; contiguous copy into an existing array >= 0.9x memcpy's speed.
--
-- This machine's speed drifts within a run by more than most differences
-- measured here, so everything runs in EPOCHS epochs, each NumPy's side and
-- then ours right after it (the pair table a source dtype at a time). A
-- figure's ratio is the median of its epochs' ratios; the times printed are
-- the medians of the epochs' times.
-- BENCH_ROUNDS sets the rounds (default 5; the pair table takes three times
-- as many), BENCH_EPOCHS the epochs (default 3); BENCH_PAIRS=0 skips the
-- astype pair table.
local dl = require "dlbridge"
local floor = require "bench_floor"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local PAIRS = os.getenv("BENCH_PAIRS") ~= "0"
local EPOCHS = tonumber(os.getenv("BENCH_EPOCHS")) or 3
local PAIR_ROUNDS = 3 * ROUNDS -- the pairs take well under a millisecond: more rounds, less noise
local BIG = 32 * 1024 * 1024 -- float64 elements: 256 MiB
local N = 10000000
local PAIRS_N = 1000000
local DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"}

local support = require "support"
local function median(f) return support.median_time(f, ROUNDS) end

local function middle(list)
  table.sort(list)
  return list[(#list + 1) // 2]
end

local function peak_rss_mib()
  local f = io.open("/proc/self/status", "r")
  local kb = f and f:read("a"):match("VmHWM:%s*(%d+)")
  if f then f:close() end
  return kb and tonumber(kb) / 1024
end

-- Our side of the main figures, by the names bulk_numpy.py prints; also
-- the memcpy floor and the loop's peak RSS.
local function main_figures()
  local t = {}
  local full = dl.ones{BIG}
  t.zeros_256MiB = median(function() for _ = 1, 20 do dl.zeros{BIG}:delete() end end) / 20
  -- What the advice on zeroed blocks buys (it costs some of the unmap
  -- above): the first touch of a fresh dl.zeros, here a fill.
  t.zeros_fill_64MiB = median(function() dl.zeros{BIG // 4}:fill(1.5):delete() end)
  t.empty_fill_256MiB = median(function() dl.empty{BIG}:fill(1.5):delete() end)
  t.copy_256MiB = median(function() full:copy():delete() end)
  local v = dl.empty{N}
  t.fill_1e7 = median(function() v:fill(2.5) end)
  full:delete()
  v:delete()

  collectgarbage("collect")
  do -- Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS
    local f = io.open("/proc/self/clear_refs", "w")
    if f then f:write("5") f:close() end
  end
  t.loop_2000x8MiB = median(function()
    for _ = 1, 2000 do
      local c = dl.empty{1024 * 1024}
      c:fill(1.0)
    end
  end)
  t.peak_rss = peak_rss_mib() or -1

  local sq = dl.ones({4096, 4096}, {dtype = "float32"})
  local dst = dl.empty({4096, 4096}, {dtype = "float32"})
  t.transpose_contiguous = median(function() sq:transpose():contiguous():delete() end)
  t.transpose_copy_from = median(function() dst:copy_from(sq:transpose()) end)

  local reps = 5
  t.copy_into = median(function() for _ = 1, reps do dst:copy_from(sq) end end) / reps
  -- floor.memcpy times its copies itself (not its allocation and first touch).
  local memcpys = {}
  for r = 1, ROUNDS do memcpys[r] = floor.memcpy(sq.nbytes, reps) end
  t.memcpy = middle(memcpys) / reps
  sq:delete()
  dst:delete()

  local src64 = dl.ones{N}
  t.astype_f64_f32 = median(function() src64:astype("float32"):delete() end)
  src64:delete()
  return t
end

-- Our side of one row of the pair table: source dtype s into every dtype,
-- contiguous and strided (every other element), 1e6 elements.
local function pair_row(s)
  local t = {}
  local a = dl.ones({PAIRS_N}, {dtype = s})
  local strided = dl.ones({2 * PAIRS_N}, {dtype = s}):slice(1, 1, -1, 2)
  for _, d in ipairs(DTYPES) do
    t["astype_" .. s .. "_" .. d] =
      support.median_time(function() a:astype(d):delete() end, PAIR_ROUNDS)
    t["astype_strided_" .. s .. "_" .. d] =
      support.median_time(function() strided:astype(d):delete() end, PAIR_ROUNDS)
  end
  a:delete()
  strided:delete()
  return t
end

-- Runs NumPy's side of a part (bulk_numpy.py's arguments after the rounds)
-- then ours, EPOCHS times, into figures: name -> {ours = {...}, numpy =
-- {...}, ratio = {...}}, one entry an epoch (numpy and ratio only where
-- NumPy gave the figure).
local function epochs(figures, part, rounds, ours_fn)
  for _ = 1, EPOCHS do
    local numpy = support.numpy_figures("bulk_numpy.py", rounds .. " " .. part)
    for name, t in pairs(ours_fn()) do
      local f = figures[name] or {ours = {}, numpy = {}, ratio = {}}
      figures[name] = f
      table.insert(f.ours, t)
      if numpy[name] then
        table.insert(f.numpy, numpy[name])
        table.insert(f.ratio, t / numpy[name])
      end
    end
  end
  return figures
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), %d epochs", dl.version,
                    _VERSION, ROUNDS, EPOCHS))
local main = epochs({}, "main", ROUNDS, main_figures)

local function report(name, label, target)
  local f = main[name]
  if #f.ratio > 0 then
    print(string.format("%-38s %9.3f ms   NumPy %9.3f ms   ratio %5.2fx  %s", label,
                        middle(f.ours) * 1e3, middle(f.numpy) * 1e3, middle(f.ratio),
                        target and string.format("(target <= %gx)", target) or "(for reference)"))
  else
    print(string.format("%-38s %9.3f ms   (no NumPy figure)", label, middle(f.ours) * 1e3))
  end
end

report("zeros_256MiB", "dl.zeros 256 MiB (mean of 20)", 1.0)
report("zeros_fill_64MiB", "dl.zeros 64 MiB + its first fill", nil)
report("empty_fill_256MiB", "dl.empty + fill 256 MiB", 1.0)
report("copy_256MiB", "a:copy() 256 MiB", 1.0)
report("fill_1e7", "a:fill(v) 1e7 float64", 1.0)
report("loop_2000x8MiB", "2000 x (empty 8 MiB + fill), no delete", 1.0)
local rss = main.peak_rss.ours
table.sort(rss)
print(string.format("%-38s %9.1f MiB  (target <= 300 MiB; the most of %d epochs)",
                    "  peak RSS during the loop", rss[#rss], EPOCHS))
report("transpose_contiguous", "a:transpose():contiguous() 4096^2 f32", 0.3)
report("transpose_copy_from", "b:copy_from(a:transpose()) 4096^2 f32", 0.3)
do
  local speeds = {}
  for e = 1, EPOCHS do speeds[e] = main.memcpy.ours[e] / main.copy_into.ours[e] end
  print(string.format("%-38s %9.3f ms   memcpy %8.3f ms   speed %5.2fx memcpy  (target >= 0.9x)",
                      "b:copy_from(a) 64 MiB, contiguous", middle(main.copy_into.ours) * 1e3,
                      middle(main.memcpy.ours) * 1e3, middle(speeds)))
end
report("astype_f64_f32", "a:astype('float32') 1e7 float64", 1.0)

if PAIRS then
  -- A row at a time, NumPy's then ours: the two sides of a pair run seconds
  -- apart, not minutes.
  local table_figures = {}
  for _, s in ipairs(DTYPES) do
    epochs(table_figures, "pairs " .. s, PAIR_ROUNDS, function() return pair_row(s) end)
  end
  local rows, met = {}, 0
  for name, f in pairs(table_figures) do
    if #f.ratio > 0 then
      local r = middle(f.ratio)
      if r <= 1.0 then met = met + 1 end
      rows[#rows + 1] = {name = name, ratio = r, t = middle(f.ours), base = middle(f.numpy)}
    end
  end
  table.sort(rows, function(x, y) return x.ratio > y.ratio end)
  print(string.format("astype, every pair of %d dtypes x {contiguous, strided}, 1e6 elements, "
                      .. "median of %d rounds: %d of %d pairs <= 1.0x NumPy; the worst:", #DTYPES,
                      PAIR_ROUNDS, met, #rows))
  for i = 1, math.min(8, #rows) do
    local r = rows[i]
    print(string.format("  %-36s %8.3f ms   NumPy %8.3f ms   ratio %5.2fx", r.name, r.t * 1e3,
                        r.base * 1e3, r.ratio))
  end
end
