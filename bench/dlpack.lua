-- bench/dlpack.lua: the DLPack round trip dl.from_dlpack(a:to_dlpack()), in ns per call,
-- against NumPy's np.from_dlpack(x) round trip (bench/dlpack_numpy.py under
-- /usr/bin/python3), the two alternated round by round (bench/support.lua), both
-- in CPU time. Targets: (issue 3) <= 130 ns and
-- <= 0.5x NumPy; (issue 8) <= 1.0x NumPy and <= 1.2x the floor below. Baselines inside Lua: a 2-entry table (the cheapest allocation),
-- and the floor: two userdata with an empty __gc, which every round trip makes
-- (the capsule and the imported array), so no round trip can be faster.
local dl = require "dlbridge"

local support = require "support"

local N = tonumber(os.getenv("BENCH_N")) or support.size(200000, 20000)
local ROUNDS = support.rounds(7)
-- Per-call figures in steady state (support.median_time_warm): with a full
-- collection before each round, two 16-byte finalizable userdata (the floor
-- below) read 180-250 ns a pair and their protected form 560-930, by the
-- order of the rounds: Lua 5.4 runs a few finalizers a step, so tiny
-- finalizable objects pile up behind them (the heap grew to 2 MiB in 5
-- rounds). dlbridge's own objects do not: its pacing steps the collector.
local function median_ns(f) return support.median_time_warm(f, ROUNDS) / N * 1e9 end

local a = dl.zeros(16)
local from_dlpack = dl.from_dlpack
local cmp = support.comparison{script = "dlpack_numpy.py", rounds = ROUNDS, width = 44,
                               args = {N = N}}
print(string.format("dlbridge %s, %s, N = %d, median of %d rounds", dl.version, _VERSION, N,
                    ROUNDS))
cmp:header()
local rt = cmp:row{name = "round_trip", label = "dl.from_dlpack(a:to_dlpack())", unit = "ns",
                   div = N, target = 1.0,
                   f = function() for _ = 1, N do from_dlpack(a:to_dlpack()) end end}
local round_trip = (rt.ours_median or 0 / 0) * 1e9
local legacy = { max_version = { 0, 0 } }
local round_trip_legacy = median_ns(function()
  for _ = 1, N do from_dlpack(a:to_dlpack(legacy)) end
end)
local protocol = median_ns(function()
  for _ = 1, N do from_dlpack(a) end
end)
local table_pair = median_ns(function()
  for i = 1, N do local _ = { i, i } end
end)
-- The floor: a round trip makes two finalizable userdata (capsule, array:
-- 96 and 16 bytes).
local finalizable = require("bench_floor").finalizable
local floor = median_ns(function()
  for _ = 1, N do finalizable(96); finalizable(16) end
end)
-- The same two made in protected mode, as dlbridge does so that Lua running
-- out of memory raises OUT_OF_MEMORY, not a plain string (issue 7).
local finalizable_protected = require("bench_floor").finalizable_protected
local floor_protected = median_ns(function()
  for _ = 1, N do finalizable_protected(96); finalizable_protected(16) end
end)

-- The least a round trip through a:to_dlpack() must do: the two objects plus
-- the method lookup through a C __index (an Array's __index must be a
-- function: a[i] reads elements). Under this lua5.4's default allocator
-- dlbridge makes the objects plainly; under a capped one, in protected mode.
local empty_index = require("bench_floor")()
local lookup = median_ns(function()
  for _ = 1, N do local _ = empty_index.to_dlpack end
end)
local floor_safe = floor + lookup

local numpy_ns = rt.numpy_median and rt.numpy_median * 1e9
print(string.format("%-44s %7.1f ns/call", "Lua {i, i} (interpreter baseline)", table_pair))
print(string.format("%-44s %7.1f ns/call", "two finalizable userdata (the floor)", floor))
print(string.format("%-44s %7.1f ns/call   %5.2fx floor", "  the same, each made in protected mode",
                    floor_protected, floor_protected / floor))
print(string.format("%-44s %7.1f ns/call   %5.2fx floor",
                    "the floor + a method lookup (C __index)", floor_safe, floor_safe / floor))
print(string.format("%-44s %7.1f ns/call   %5.2fx floor      (target <= 1.2x floor, 130 ns)",
                    "dl.from_dlpack(a:to_dlpack())", round_trip, round_trip / floor))
print(string.format("%-44s %7s           %5.2fx the floor + lookup",
                    "", "", round_trip / floor_safe))
print(string.format("%-44s %7.1f ns/call   %5.2fx floor",
                    "dl.from_dlpack(a:to_dlpack{legacy})", round_trip_legacy, round_trip_legacy / floor))
print(string.format("%-44s %7.1f ns/call   %5.2fx floor",
                    "dl.from_dlpack(a) (protocol)", protocol, protocol / floor))
if numpy_ns then
  print(string.format("%-44s %7.1f ns/call   dlbridge/NumPy = %.2fx   (target <= 1.0x; 0.5x)",
                      "NumPy np.from_dlpack(x) (python3-numpy)", numpy_ns, round_trip / numpy_ns))
else
  print("NumPy round trip: /usr/bin/python3 with numpy not available, no ratio")
end
cmp:finish()
