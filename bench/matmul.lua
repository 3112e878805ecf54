-- bench/matmul.lua: matrix products and joining (issue 9). Each figure is the
-- median over ROUNDS rounds of CPU time per call (os.clock), with its spread,
-- against NumPy's (bench/matmul_numpy.py under /usr/bin/python3), alternated
-- case by case (bench/support.lua): each round runs NumPy's side and then
-- this side, so that a busy machine slows both alike. Each side makes two
-- untimed calls of every figure first (first-call costs, BLAS buffers,
-- first-touch pages).
-- Target: matmul 1024x1024 float32 and float64 <= 1.05x NumPy; both sides
-- call the same BLAS (the libraries each process maps are printed).
-- The issue's goals are single-threaded: unless OPENBLAS_NUM_THREADS is set,
-- the script runs itself again with OPENBLAS_NUM_THREADS=1 (OpenBLAS reads
-- it when it loads), and NumPy inherits the same setting. With more threads
-- CPU time adds up the threads' time, on both sides alike.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_QUICK=1 cuts the sizes.
local support = require "support"
support.single_threaded_blas()
local dl = require "dlbridge"

local ROUNDS = support.rounds(7)
local MM = support.size(1024, 256)    -- the large products' side
local GEMV = support.size(2048, 512)  -- the matrix-vector product's side
local PARTS = support.size(100, 10)   -- arrays joined
-- calls a round of the shorter products (NumPy's side makes as many)
local REPS = {small = support.size(3000, 300), tiny = support.size(20000, 2000),
              batch = support.size(80, 8), ints = support.size(3, 1)}

local cmp = support.comparison{script = "matmul_numpy.py", rounds = ROUNDS, width = 42,
                               args = {MM = MM, GEMV = GEMV, PARTS = PARTS, SMALL_REPS = REPS.small,
                                       TINY_REPS = REPS.tiny, BATCH_REPS = REPS.batch,
                                       INT_REPS = REPS.ints}}
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS")))
cmp:header()

-- A figure: name (as matmul_numpy.py's), label, the call, calls a round, target.
local function figure(name, label, f, reps, target)
  cmp:row{name = name, label = label, f = f, reps = reps, target = target, warmups = 2}
end

for _, dtype in ipairs{"float32", "float64"} do
  local a = dl.full({MM, MM}, 0.5, {dtype = dtype})
  local b = dl.full({MM, MM}, 0.25, {dtype = dtype})
  local out = dl.empty({MM, MM}, {dtype = dtype})
  local bt = b:T()
  local side = string.format("matmul %d^2 %s", MM, dtype)
  figure("matmul_1024_" .. dtype, side, function() dl.matmul(a, b):delete() end, 3, 1.05)
  figure("matmul_1024_" .. dtype .. "_out", side .. " {out=}",
         function() dl.matmul(a, b, {out = out}) end, 3)
  figure("matmul_1024_" .. dtype .. "_bT", side .. ", b:T()",
         function() dl.matmul(a, bt):delete() end, 3)
end
local small = dl.full({64, 64}, 0.5, {dtype = "float32"})
figure("matmul_64_float32", "matmul 64^2 float32", function() dl.matmul(small, small) end,
       REPS.small)
local tiny = dl.full({4, 4}, 0.5)
figure("matmul_4_float64", "matmul 4^2 float64 (per call)", function() dl.matmul(tiny, tiny) end,
       REPS.tiny)
local batch = dl.full({256, 32, 32}, 0.5, {dtype = "float32"})
figure("matmul_batch_256x32x32_float32", "matmul 256 x 32^2 float32 (batched)",
       function() dl.matmul(batch, batch):delete() end, REPS.batch)
local mat, vec = dl.full({GEMV, GEMV}, 0.5), dl.full({GEMV}, 0.25)
figure("matvec_2048_float64", string.format("matmul %d^2 x %d float64 (gemv)", GEMV, GEMV),
       function() dl.matmul(mat, vec) end, 20)
local ints = dl.ones({256, 256}, {dtype = "int64"})
figure("matmul_256_int64", "matmul 256^2 int64 (plain loop)",
       function() dl.matmul(ints, ints):delete() end, REPS.ints)
local parts = {}
for i = 1, PARTS do parts[i] = dl.full({100, 1000}, 0.5, {dtype = "float32"}) end
figure("concat_100x(100x1000)_float32", string.format("concat %d x (100, 1000) f32, dim 2", PARTS),
       function() dl.concat(parts, 2):delete() end, 5)
figure("stack_100x(100x1000)_float32", string.format("stack %d x (100, 1000) f32, dim 3", PARTS),
       function() dl.stack(parts, 3):delete() end, 5)

local ours = support.blas_libraries()
print("BLAS mapped by dlbridge: " .. (#ours > 0 and table.concat(ours, ", ") or "none"))
print("BLAS mapped by NumPy:    " .. (cmp:value("blas") or "?"))
cmp:finish()
