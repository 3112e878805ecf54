-- bench/quantile.lua: dl.median, dl.quantile and dl.percentile against NumPy
-- 1.24's np.median, np.quantile and np.percentile (issue 35). Each figure is
-- the median over ROUNDS rounds of CPU time per call (os.clock), against
-- NumPy's (bench/quantile_numpy.py under /usr/bin/python3), alternated case by
-- case (bench/support.lua). Both sides copy each slice and select the ranks
-- wanted in the copy (NumPy: np.partition's introselect; dlbridge:
-- src/compute/select_kth.h), so the figures compare the copies, the selection
-- and the calls around them. The data is the same on both sides: the
-- fractional part of sin(i * 12.9898) * 43758.5453, a pseudo-random spread.
-- Goal: <= 1.0x NumPy.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_QUICK=1 cuts the sizes.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(7)
local N = support.size(1000000, 100000)   -- the 1-D arrays' length
local SIDE = support.size(1000, 300)      -- the square matrices' side
local cmp = support.comparison{script = "quantile_numpy.py", rounds = ROUNDS, width = 46,
                               args = {N = N, SIDE = SIDE}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time)", dl.version, _VERSION,
                    ROUNDS))
cmp:header()

local function figure(name, label, f, reps)
  cmp:row{name = name, label = label, f = f, reps = reps, target = 1.0, warmups = 2}
end

local function spread(n, dtype)
  local x = dl.sin(dl.arange(n, {dtype = "float64"}) * 12.9898) * 43758.5453
  return (x - dl.floor(x)):astype(dtype)
end

local f64, f32 = spread(N, "float64"), spread(N, "float32")
local i32 = (spread(N, "float64") * 1000000):astype("int32")
local nan64 = f64:copy()
nan64:slice(1, 1, nil, 97):fill(0 / 0)
local m = spread(SIDE * SIDE, "float64"):reshape(SIDE, SIDE)
local rows3 = spread(N, "float64"):narrow(1, 1, N - N % 3):reshape(-1, 3) -- many short slices

figure("median_f64", string.format("median of %d float64", N), function() dl.median(f64) end, 1)
figure("median_f32", string.format("median of %d float32", N), function() dl.median(f32) end, 1)
figure("median_i32", string.format("median of %d int32", N), function() dl.median(i32) end, 1)
figure("nanmedian_f64", string.format("nanmedian of %d float64 (1%% NaN)", N),
       function() dl.nanmedian(nan64) end, 1)
figure("quantile5_f64", string.format("quantile of %d float64 at 5 q", N),
       function() dl.quantile(f64, {0.05, 0.25, 0.5, 0.75, 0.95}):delete() end, 1)
figure("percentile_dim1", string.format("percentile 95 along dim 1 of (%d, %d)", SIDE, SIDE),
       function() dl.percentile(m, 95, {dim = 1}):delete() end, 1)
figure("percentile_dim2", string.format("percentile 95 along dim 2 of (%d, %d)", SIDE, SIDE),
       function() dl.percentile(m, 95, {dim = 2}):delete() end, 1)
figure("median_dim2", string.format("median along dim 2 of (%d, %d)", SIDE, SIDE),
       function() dl.median(m, {dim = 2}):delete() end, 1)
figure("median_rows3", string.format("median along dim 2 of (%d, 3)", rows3.shape[1]),
       function() dl.median(rows3, {dim = 2}):delete() end, 1)
cmp:finish()
