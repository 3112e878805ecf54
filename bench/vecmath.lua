-- bench/vecmath.lua: dl.cross, dl.norm, dl.einsum and dl.interp against NumPy
-- (issue 35). Each figure is the median over ROUNDS rounds of CPU time per call
-- (os.clock), against NumPy's (bench/vecmath_numpy.py under /usr/bin/python3),
-- alternated case by case (bench/support.lua): each round runs NumPy's side and
-- then this side, on the same float64 operands. Goal: <= 1.0x NumPy.
-- Single-threaded, as bench/matmul.lua: unless OPENBLAS_NUM_THREADS is set,
-- the script runs itself again with OPENBLAS_NUM_THREADS=1.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_QUICK=1 cuts the sizes.
local support = require "support"
support.single_threaded_blas()
local dl = require "dlbridge"

local ROUNDS = support.rounds(7)
local ROWS = support.size(100000, 10000) -- vectors of 3
local MAT = 256                          -- einsum ij,jk->ik
local POINTS = support.size(1000000, 100000)
local KNOTS = 1000
local cmp = support.comparison{script = "vecmath_numpy.py", rounds = ROUNDS, width = 44,
                               args = {ROWS = ROWS, MAT = MAT, POINTS = POINTS, KNOTS = KNOTS}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS")))
cmp:header()

local function figure(name, label, f, reps)
  cmp:row{name = name, label = label, f = f, reps = reps, target = 1.0, warmups = 2}
end

-- The same operands on both sides: ((i * 7 + j * 3) mod 11) / 11 - 0.5.
local function pattern(rows, cols)
  local i = dl.arange(rows):reshape(rows, 1)
  local j = dl.arange(cols):reshape(1, cols)
  return (((i * 7 + j * 3) % 11) / 11 - 0.5):copy()
end

local a, b = pattern(ROWS, 3), pattern(ROWS, 3):slice(1, nil, nil, -1):copy()
local m1, m2 = pattern(MAT, MAT), pattern(MAT, MAT):T():copy()
local xp = dl.linspace(0, 1, KNOTS) ^ 2
local fp = dl.sin(xp * 10)
local x = (dl.arange(POINTS) * 0.6180339887) % 1.0

local tag = string.format("(%d, 3)", ROWS)
figure("cross", "cross " .. tag, function() dl.cross(a, b):delete() end, 1)
figure("norm_dim2", "norm " .. tag .. ", dim 2", function() dl.norm(a, {dim = 2}):delete() end, 1)
figure("einsum_bi_bi_b", "einsum bi,bi->b " .. tag, function() dl.einsum("bi,bi->b", a, b):delete() end, 1)
figure("einsum_ij_jk_ik", string.format("einsum ij,jk->ik %d^2", MAT),
       function() dl.einsum("ij,jk->ik", m1, m2):delete() end, 4)
figure("interp", string.format("interp %d points, %d knots", POINTS, KNOTS),
       function() dl.interp(x, xp, fp):delete() end, 1)
cmp:finish()
