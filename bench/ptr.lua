-- bench/ptr.lua (LuaJIT only): the sum of 1e7 float32 three ways, each the
-- median of ROUNDS rounds of CPU time (os.clock), against numpy.sum of the
-- same numbers (Debian's python3-numpy under /usr/bin/python3, serving
-- through bench/numpy_support.py), alternated round by round
-- (bench/support.lua):
--   ptr     a JIT-compiled loop over a:ptr() (LuaJIT's FFI reads the memory)
--   index   a JIT-compiled loop over a[i] (one metamethod call an element)
--   sum     a:sum() (dlbridge's own reduction: pairwise, float32 accumulate)
-- Run: bench/run does, when build-luajit exists; by hand:
--   LUA_PATH="bench/?.lua;lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build-luajit/lib/?.so;;" luajit bench/ptr.lua
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_QUICK=1 sums 1e6.
if not jit then
  io.stderr:write("bench/ptr.lua runs under LuaJIT (a:ptr() is LuaJIT's)\n")
  os.exit(1)
end
local dl = require "dlbridge"
local support = require "support"

local N = support.size(10000000, 1000000)
local ROUNDS = support.rounds(5)

-- random values in [0, 1): no shortcut for constant data on either side
local a = dl.random.default_rng(1):random({N}, {dtype = "float32"})

local sums = {}
local ways = {
  {"ptr", "a:ptr() loop", function()
    local p, s = a:ptr(), 0
    for i = 0, N - 1 do s = s + p[i] end
    sums.ptr = s
  end},
  {"index", "a[i] loop", function()
    local s = 0
    for i = 1, N do s = s + a[i] end
    sums.index = s
  end},
  {"sum", "a:sum()", function() sums.sum = a:sum() end},
}

local cmp = support.comparison{script = "ptr_numpy.py", rounds = ROUNDS, width = 24,
                               args = {N = N}}
print(("sum of %d float32, median of %d rounds (%s); NumPy: a.sum()"):format(N, ROUNDS,
                                                                           jit.version))
cmp:header()
for _, way in ipairs(ways) do
  -- untimed warm-up first (support does it): the JIT compiles the loop
  cmp:row{name = "sum", label = way[2], f = way[3],
          note = function(r) return ("%.3f ns/element"):format(r.ours_median / N * 1e9) end}
end
cmp:finish()
-- the sums agree (float32 data summed in double by the loops, in float32
-- pairwise by a:sum(): to about 1e-6 relative)
assert(sums.ptr == sums.index, "ptr and index loops disagree")
assert(math.abs(sums.sum - sums.ptr) <= 1e-4 * math.abs(sums.ptr), "a:sum() disagrees")
