-- bench/scatter.lua: dl.scatter_add, _max, _min and _mul against NumPy's
-- np.add.at, np.maximum.at, np.minimum.at and np.multiply.at (issue 35). Each
-- figure is the median over ROUNDS rounds of CPU time per call (os.clock),
-- against NumPy's (bench/scatter_numpy.py under /usr/bin/python3), alternated
-- case by case (bench/support.lua). N updates (1e6) of float64 values at
-- pseudo-random int64 indices into 1e3 bins (they stay in cache) and 1e5 bins
-- (800 KB: they mostly do not), one op each; then an int64 histogram (one
-- number for every update), float32 values, and whole rows (the {dim} form's
-- index_add: 1e5 rows of 16 into 1e3). Goal: <= 1.0x NumPy.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_QUICK=1 cuts the sizes.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(7)
local N = support.size(1000000, 100000)
local ROWS = support.size(100000, 10000)
local cmp = support.comparison{script = "scatter_numpy.py", rounds = ROUNDS, width = 44,
                               args = {N = N, ROWS = ROWS}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time)", dl.version, _VERSION,
                    ROUNDS))
cmp:header()

local function figure(name, label, f)
  cmp:row{name = name, label = label, f = f, reps = 1, target = 1.0, warmups = 1}
end

-- The same operands as NumPy's side: index k is (k * 7919) mod bins (1-based
-- here), value k is (k mod 17) / 17, or 1 + (k mod 17) / 1e4 to multiply.
local function indices(n, bins) return dl.arange(n, {dtype = "int64"}) * 7919 % bins + 1 end
local function values(n, dtype) return (dl.arange(n) % 17 / 17):astype(dtype or "float64") end

local ops = {{"add", dl.scatter_add}, {"max", dl.scatter_max}, {"min", dl.scatter_min},
             {"mul", dl.scatter_mul}}
for _, bins in ipairs{1000, 100000} do
  local idx, v = indices(N, bins), values(N)
  local v_mul = values(N) / 1e4 + 1
  for _, op in ipairs(ops) do
    local target = dl.zeros{bins}
    local name, f = op[1], op[2]
    local vals = name == "mul" and v_mul or v
    if name == "mul" then target = dl.ones{bins} end
    figure(string.format("%s_%d", name, bins),
           string.format("scatter_%s %s into %s bins", name, support.count(N), support.count(bins)),
           function() f(target, idx, vals) end)
  end
end

local idx3 = indices(N, 1000)
local counts = dl.zeros({1000}, {dtype = "int64"})
figure("histogram_int64", string.format("scatter_add int64 1 x %s into 1e3", support.count(N)),
       function() dl.scatter_add(counts, idx3, 1) end)
local t32, v32 = dl.zeros({1000}, {dtype = "float32"}), values(N, "float32")
figure("add_float32", string.format("scatter_add float32 %s into 1e3", support.count(N)),
       function() dl.scatter_add(t32, idx3, v32) end)
local rows, ridx = dl.zeros{1000, 16}, indices(ROWS, 1000)
local rvals = values(ROWS * 16):reshape{ROWS, 16}
figure("add_rows", string.format("scatter_add rows %s x 16 into 1e3", support.count(ROWS)),
       function() dl.scatter_add(rows, ridx, rvals) end)
cmp:finish()
