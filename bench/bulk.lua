-- bench/bulk.lua: bulk data at memory speed (issue 8). Each figure is the median
-- of ROUNDS rounds of CPU time (os.clock: page faults count), printed with the
-- baseline measured in the same run: NumPy (bench/bulk_numpy.py under
-- /usr/bin/python3, Debian's python3-numpy) or memcpy (bench_floor.memcpy).
-- Targets: zeros, empty+fill, copy, fill, astype (every pair, contiguous and
-- strided) <= 1.0x NumPy; 2,000 arrays of 8 MiB made and filled without delete
-- <= 1.0x NumPy with peak RSS <= 300 MiB; transpose-copy 4096^2 float32 <= 0.3x
-- NumPy; contiguous copy into an existing array >= 0.9x memcpy's speed.
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_PAIRS=0 skips the pair table,
-- BENCH_EPOCHS sets its epochs (default 3).
local dl = require "dlbridge"
local floor = require "bench_floor"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local PAIRS = os.getenv("BENCH_PAIRS") ~= "0"
local EPOCHS = tonumber(os.getenv("BENCH_EPOCHS")) or 3
local BIG = 32 * 1024 * 1024 -- float64 elements: 256 MiB
local N = 10000000
local PAIRS_N = 1000000
local DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"}

local support = require "support"
local function median(f) return support.median_time(f, ROUNDS) end

-- NumPy's figures, by name, from the same run (nil when NumPy is missing).
local numpy = support.numpy_figures("bulk_numpy.py", ROUNDS .. " main")

local function peak_rss_mib()
  local f = io.open("/proc/self/status", "r")
  local kb = f and f:read("a"):match("VmHWM:%s*(%d+)")
  if f then f:close() end
  return kb and tonumber(kb) / 1024
end

local function report(name, label, seconds, target)
  local base = numpy[name]
  if base then
    print(string.format("%-36s %9.3f ms   NumPy %9.3f ms   ratio %5.2fx  %s",
                        label, seconds * 1e3, base * 1e3, seconds / base,
                        target and string.format("(target <= %gx)", target) or "(for reference)"))
  else
    print(string.format("%-36s %9.3f ms   (no NumPy figure)", label, seconds * 1e3))
  end
  return base and seconds / base
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time)", dl.version, _VERSION,
                    ROUNDS))
local full = dl.ones{BIG}
report("zeros_256MiB", "dl.zeros 256 MiB (mean of 20)",
       median(function() for _ = 1, 20 do dl.zeros{BIG}:delete() end end) / 20, 1.0)
-- What the advice on zeroed blocks buys (it costs the unmap above): the
-- first touch of a fresh dl.zeros, here a fill (no target; for reference).
report("zeros_fill_64MiB", "dl.zeros 64 MiB + its first fill",
       median(function() dl.zeros{BIG // 4}:fill(1.5):delete() end), nil)
report("empty_fill_256MiB", "dl.empty + fill 256 MiB",
       median(function() dl.empty{BIG}:fill(1.5):delete() end), 1.0)
report("copy_256MiB", "a:copy() 256 MiB", median(function() full:copy():delete() end), 1.0)
local v = dl.empty{N}
report("fill_1e7", "a:fill(v) 1e7 float64", median(function() v:fill(2.5) end), 1.0)
full:delete()
v:delete()

collectgarbage("collect")
do -- Linux: writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS
  local f = io.open("/proc/self/clear_refs", "w")
  if f then f:write("5") f:close() end
end
local loop = median(function()
  for _ = 1, 2000 do
    local c = dl.empty{1024 * 1024}
    c:fill(1.0)
  end
end)
report("loop_2000x8MiB", "2000 x (empty 8 MiB + fill), no delete", loop, 1.0)
print(string.format("%-36s %9.1f MiB  (target <= 300 MiB)", "  peak RSS during the loop",
                    peak_rss_mib() or -1))

local sq = dl.ones({4096, 4096}, {dtype = "float32"})
local dst = dl.empty({4096, 4096}, {dtype = "float32"})
report("transpose_contiguous", "a:transpose():contiguous() 4096^2 f32",
       median(function() sq:transpose():contiguous():delete() end), 0.3)
report("transpose_copy_from", "b:copy_from(a:transpose()) 4096^2 f32",
       median(function() dst:copy_from(sq:transpose()) end), 0.3)

local reps = 5
local copy_into = median(function() for _ = 1, reps do dst:copy_from(sq) end end)
-- floor.memcpy times its copies itself (not its allocation and first touch).
local memcpys = {}
for r = 1, ROUNDS do memcpys[r] = floor.memcpy(sq.nbytes, reps) end
table.sort(memcpys)
local memcpy = memcpys[(ROUNDS + 1) // 2]
print(string.format("%-36s %9.3f ms   memcpy %8.3f ms   speed %5.2fx memcpy  (target >= 0.9x)",
                    "b:copy_from(a) 64 MiB, contiguous", copy_into / reps * 1e3,
                    memcpy / reps * 1e3, memcpy / copy_into))

local src64 = dl.ones{N}
report("astype_f64_f32", "a:astype('float32') 1e7 float64",
       median(function() src64:astype("float32"):delete() end), 1.0)
src64:delete()

if PAIRS then
  -- Every pair, contiguous and strided (every other element), 1e6 elements:
  -- the worst ratios, and how many pairs meet the target. The machine's speed
  -- drifts within a run, so the table is measured in EPOCHS epochs, each
  -- NumPy's side and then ours right after it; a pair's ratio is the median
  -- of its epochs' ratios.
  local ratios, ours, theirs = {}, {}, {} -- by pair name: one figure an epoch
  local function add(list, name, v)
    list[name] = list[name] or {}
    table.insert(list[name], v)
  end
  for _ = 1, EPOCHS do
    local base = support.numpy_figures("bulk_numpy.py", ROUNDS .. " pairs")
    for _, s in ipairs(DTYPES) do
      local a = dl.ones({PAIRS_N}, {dtype = s})
      local strided = dl.ones({2 * PAIRS_N}, {dtype = s}):slice(1, 1, -1, 2)
      for _, d in ipairs(DTYPES) do
        for _, layout in ipairs{"", "strided_"} do
          local x = layout == "" and a or strided
          local name = "astype_" .. layout .. s .. "_" .. d
          local t = median(function() x:astype(d):delete() end)
          if base[name] then
            add(ratios, name, t / base[name])
            add(ours, name, t)
            add(theirs, name, base[name])
          end
        end
      end
      a:delete()
      strided:delete()
    end
  end
  local function middle(list)
    table.sort(list)
    return list[(#list + 1) // 2]
  end
  local rows, met = {}, 0
  for name, list in pairs(ratios) do
    local r = middle(list)
    if r <= 1.0 then met = met + 1 end
    rows[#rows + 1] = {name = name, ratio = r, t = middle(ours[name]), base = middle(theirs[name])}
  end
  table.sort(rows, function(x, y) return x.ratio > y.ratio end)
  print(string.format("astype, every pair of %d dtypes x {contiguous, strided}, 1e6 elements, "
                      .. "median ratio of %d epochs: %d of %d pairs <= 1.0x NumPy; the worst:",
                      #DTYPES, EPOCHS, met, #rows))
  for i = 1, math.min(8, #rows) do
    local r = rows[i]
    print(string.format("  %-34s %8.3f ms   NumPy %8.3f ms   ratio %5.2fx", r.name, r.t * 1e3,
                        r.base * 1e3, r.ratio))
  end
end
