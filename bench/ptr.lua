-- bench/ptr.lua (LuaJIT only): the sum of 1e7 float32 four ways, each the
-- median of ROUNDS rounds of CPU time (os.clock), NumPy's in the same run:
--   ptr     a JIT-compiled loop over a:ptr() (LuaJIT's FFI reads the memory)
--   index   a JIT-compiled loop over a[i] (one metamethod call an element)
--   sum     a:sum() (dlbridge's own reduction: pairwise, float32 accumulate)
--   numpy   numpy.sum (Debian's python3-numpy under /usr/bin/python3)
-- Both sides alternate epoch by epoch (BENCH_EPOCHS, default 3): NumPy's
-- rounds, then ours; a ratio is the median of the epochs' ratios.
-- Run: bench/run does, when build-luajit exists; by hand:
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build-luajit/lib/?.so;;" luajit bench/ptr.lua
if not jit then
  io.stderr:write("bench/ptr.lua runs under LuaJIT (a:ptr() is LuaJIT's)\n")
  os.exit(1)
end
local dl = require "dlbridge"

local N = 10000000
local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local EPOCHS = tonumber(os.getenv("BENCH_EPOCHS")) or 3

local function median(list)
  local sorted = {}
  for i = 1, #list do sorted[i] = list[i] end
  table.sort(sorted)
  return sorted[math.floor((#sorted + 1) / 2)]
end

local function time_of(f)
  local times = {}
  for r = 1, ROUNDS do
    local t0 = os.clock()
    f()
    times[r] = os.clock() - t0
  end
  return median(times)
end

-- random values in [0, 1): no shortcut for constant data on either side
local a = dl.random.default_rng(1):random({N}, {dtype = "float32"})

local sums = {}
local ways = {
  {"ptr", function()
    local p, s = a:ptr(), 0
    for i = 0, N - 1 do s = s + p[i] end
    sums.ptr = s
  end},
  {"index", function()
    local s = 0
    for i = 1, N do s = s + a[i] end
    sums.index = s
  end},
  {"sum", function() sums.sum = a:sum() end},
}

local NUMPY = [[
import sys, time
import numpy as np
n, rounds = int(sys.argv[1]), int(sys.argv[2])
a = np.random.default_rng(1).random(n, dtype=np.float32)
times = []
for _ in range(rounds):
    t0 = time.process_time()
    a.sum()
    times.append(time.process_time() - t0)
times.sort()
print(times[(rounds - 1) // 2])
]]

local function numpy_time()
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(NUMPY)
  f:close()
  local py = io.popen(("/usr/bin/python3 %s %d %d 2>/dev/null"):format(script, N, ROUNDS))
  local t = py and tonumber(py:read("*l"))
  if py then py:close() end
  os.remove(script)
  return t
end

local times, ratios = {numpy = {}}, {}
for _, way in ipairs(ways) do times[way[1]], ratios[way[1]] = {}, {} end
for epoch = 1, EPOCHS do
  local np_t = numpy_time()
  times.numpy[epoch] = np_t or 0 / 0
  for _, way in ipairs(ways) do
    way[2]() -- once untimed: the JIT compiles the loop
    local t = time_of(way[2])
    times[way[1]][epoch] = t
    ratios[way[1]][epoch] = np_t and t / np_t or 0 / 0
  end
end

print(("sum of %d float32, median of %d rounds x %d epochs (%s)"):format(N, ROUNDS, EPOCHS, jit.version))
print(("%-8s %10s %12s %12s"):format("way", "ms", "ns/element", "x numpy"))
for _, name in ipairs({"numpy", "ptr", "index", "sum"}) do
  local t = median(times[name])
  local r = name == "numpy" and 1 or median(ratios[name])
  print(("%-8s %10.2f %12.3f %12.2f"):format(name, t * 1e3, t / N * 1e9, r))
end
-- the sums agree (float32 data summed in double by the loops, in float32
-- pairwise by a:sum(): to about 1e-6 relative)
assert(sums.ptr == sums.index, "ptr and index loops disagree")
assert(math.abs(sums.sum - sums.ptr) <= 1e-4 * math.abs(sums.ptr), "a:sum() disagrees")
