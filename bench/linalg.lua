-- bench/linalg.lua: dl.linalg against numpy.linalg (issue 35). Each figure is
-- the median over ROUNDS rounds of CPU time per call (os.clock), against
-- NumPy's (bench/linalg_numpy.py under /usr/bin/python3), alternated case by
-- case (bench/support.lua): each round runs NumPy's side and then this side.
-- Both sides call the same LAPACK (liblapack.so.3: OpenBLAS's here) on float64
-- copies of the operands, so the large cases measure the copies and the calls
-- around LAPACK; the small batched ones (3x3 and 4x4 solves and inverses, as
-- games use) the cost per matrix. Goal: <= 1.0x NumPy.
-- Single-threaded, as bench/matmul.lua: unless OPENBLAS_NUM_THREADS is set,
-- the script runs itself again with OPENBLAS_NUM_THREADS=1.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_QUICK=1 cuts the sizes.
local support = require "support"
support.single_threaded_blas()
local dl = require "dlbridge"

local ROUNDS = support.rounds(7)
local BIG = support.size(1024, 256)   -- the large matrices' side
local MID = 256
local BATCH = support.size(10000, 1000) -- small matrices in a stack
local cmp = support.comparison{script = "linalg_numpy.py", rounds = ROUNDS, width = 44,
                               args = {BIG = BIG, MID = MID, BATCH = BATCH}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS")))
cmp:header()

local L = dl.linalg
local function figure(name, label, f, reps)
  cmp:row{name = name, label = label, f = f, reps = reps, target = 1.0, warmups = 2}
end

-- Well-conditioned operands, the same on both sides: n * I + (i + 2j) mod 7 / 7.
local function matrix(batch, n)
  local shape = batch and {batch, n, n} or {n, n}
  local i = dl.arange(n):reshape(n, 1)
  local j = dl.arange(n):reshape(1, n)
  local a = ((i + j * 2) % 7) / 7 + dl.eye(n) * n
  return (a:expand(shape)):copy()
end
local function spd(batch, n)
  local a = matrix(batch, n)
  return (a + a:transpose(a.ndim - 1, a.ndim)):copy()
end

for _, n in ipairs{3, 4} do
  local a, b = matrix(BATCH, n), dl.ones(BATCH, n)
  local tag = string.format("%d x %d^2", BATCH, n)
  figure("solve_batch_" .. n, "solve " .. tag .. " (vectors)", function() L.solve(a, b):delete() end, 1)
  figure("inv_batch_" .. n, "inv " .. tag, function() L.inv(a):delete() end, 1)
  figure("det_batch_" .. n, "det " .. tag, function() L.det(a):delete() end, 1)
end
local s4 = spd(BATCH, 4)
figure("cholesky_batch_4", string.format("cholesky %d x 4^2", BATCH), function() L.cholesky(s4):delete() end, 1)
figure("eigh_batch_4", string.format("eigh %d x 4^2", BATCH), function() L.eigh(s4) end, 1)

for _, n in ipairs{MID, BIG} do
  local a, b, s = matrix(nil, n), dl.ones(n), spd(nil, n)
  local reps = n == MID and 20 or 1
  figure("solve_" .. n, string.format("solve %d^2, 1 column", n), function() L.solve(a, b):delete() end, reps)
  figure("inv_" .. n, string.format("inv %d^2", n), function() L.inv(a):delete() end, reps)
  figure("det_" .. n, string.format("det %d^2", n), function() L.det(a) end, reps)
  figure("slogdet_" .. n, string.format("slogdet %d^2", n), function() L.slogdet(a) end, reps)
  figure("cholesky_" .. n, string.format("cholesky %d^2", n), function() L.cholesky(s):delete() end, reps)
  if n == MID then
    figure("eigh_" .. n, string.format("eigh %d^2", n), function() L.eigh(s) end, 4)
    figure("svd_" .. n, string.format("svd %d^2", n), function() L.svd(a) end, 2)
    figure("qr_" .. n, string.format("qr %d^2", n), function() L.qr(a) end, 4)
    figure("lstsq_" .. n, string.format("lstsq %d^2, 1 column", n), function() L.lstsq(a, b) end, 2)
  end
end
cmp:finish()
