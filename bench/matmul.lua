-- bench/matmul.lua: matrix products and joining (issue 9). Each figure is the
-- median over ROUNDS rounds of CPU time per call (os.clock), printed with
-- NumPy's, measured in the same run by bench/matmul_numpy.py under
-- /usr/bin/python3. The two take turns: each round runs NumPy's side (a new
-- python3, one round) and then this side, so that a busy machine slows both
-- alike. Each side makes untimed calls of every figure first (NumPy two in
-- each process: first-call costs, first-touch pages).
-- Target: matmul 1024x1024 float32 and float64 <= 1.05x NumPy; both sides
-- call the same BLAS (the libraries each process maps are printed).
-- The issue's goals are single-threaded: unless OPENBLAS_NUM_THREADS is set,
-- the script runs itself again with OPENBLAS_NUM_THREADS=1 (OpenBLAS reads
-- it when it loads), and NumPy inherits the same setting. With more threads
-- CPU time adds up the threads' time, on both sides alike.
-- BENCH_ROUNDS sets the rounds (default 7).
if not os.getenv("OPENBLAS_NUM_THREADS") then
  local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local ok = os.execute("OPENBLAS_NUM_THREADS=1 exec " .. quote(arg[-1] or "lua5.4") .. " "
                        .. quote(arg[0]))
  os.exit(ok and 0 or 1)
end

local dl = require "dlbridge"
local support = require "support"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 7
local here = support.here()

-- The BLAS libraries this process maps (Linux's /proc/self/maps).
local function blas_libraries()
  local seen, list = {}, {}
  local f = io.open("/proc/self/maps", "r")
  if not f then return list end
  for line in f:lines() do
    local path = line:match("(/%S*blas%S*)$")
    if path and not seen[path] then
      seen[path] = true
      list[#list + 1] = path
    end
  end
  f:close()
  return list
end

-- One round of NumPy's side: {name = seconds}, and the BLAS it maps.
local function numpy_round()
  local figures, blas = {}, {}
  local py = io.popen("/usr/bin/python3 " .. here .. "/matmul_numpy.py 1 2>/dev/null")
  if not py then return figures, blas end
  for line in py:lines() do
    local name, value = line:match("^(%S+) (%S+)$")
    if name == "blas" then blas[#blas + 1] = value
    elseif name then figures[name] = tonumber(value) end
  end
  py:close()
  return figures, blas
end

-- The figures: name (as matmul_numpy.py's), label, the call, calls a round, target.
local figures = {}
local function figure(name, label, f, reps, target)
  figures[#figures + 1] = {name = name, label = label, f = f, reps = reps or 1, target = target,
                           ours = {}, numpy = {}}
end

for _, dtype in ipairs{"float32", "float64"} do
  local a = dl.full({1024, 1024}, 0.5, {dtype = dtype})
  local b = dl.full({1024, 1024}, 0.25, {dtype = dtype})
  local out = dl.empty({1024, 1024}, {dtype = dtype})
  local bt = b:T()
  figure("matmul_1024_" .. dtype, "matmul 1024^2 " .. dtype,
         function() dl.matmul(a, b):delete() end, 3, 1.05)
  figure("matmul_1024_" .. dtype .. "_out", "matmul 1024^2 " .. dtype .. " {out=}",
         function() dl.matmul(a, b, {out = out}) end, 3)
  figure("matmul_1024_" .. dtype .. "_bT", "matmul 1024^2 " .. dtype .. ", b:T()",
         function() dl.matmul(a, bt):delete() end, 3)
end
local small = dl.full({64, 64}, 0.5, {dtype = "float32"})
figure("matmul_64_float32", "matmul 64^2 float32", function() dl.matmul(small, small) end, 3000)
local tiny = dl.full({4, 4}, 0.5)
figure("matmul_4_float64", "matmul 4^2 float64 (per call)", function() dl.matmul(tiny, tiny) end,
       20000)
local batch = dl.full({256, 32, 32}, 0.5, {dtype = "float32"})
figure("matmul_batch_256x32x32_float32", "matmul 256 x 32^2 float32 (batched)",
       function() dl.matmul(batch, batch):delete() end, 80)
local mat, vec = dl.full({2048, 2048}, 0.5), dl.full({2048}, 0.25)
figure("matvec_2048_float64", "matmul 2048^2 x 2048 float64 (gemv)",
       function() dl.matmul(mat, vec) end, 20)
local ints = dl.ones({256, 256}, {dtype = "int64"})
figure("matmul_256_int64", "matmul 256^2 int64 (plain loop)",
       function() dl.matmul(ints, ints):delete() end, 3)
local parts = {}
for i = 1, 100 do parts[i] = dl.full({100, 1000}, 0.5, {dtype = "float32"}) end
figure("concat_100x(100x1000)_float32", "concat 100 x (100, 1000) f32, dim 2",
       function() dl.concat(parts, 2):delete() end, 5)
figure("stack_100x(100x1000)_float32", "stack 100 x (100, 1000) f32, dim 3",
       function() dl.stack(parts, 3):delete() end, 5)

local numpy_blas = {}
for _, fig in ipairs(figures) do fig.f() fig.f() end -- untimed
for r = 1, ROUNDS do
  local theirs
  theirs, numpy_blas = numpy_round()
  for _, fig in ipairs(figures) do
    fig.numpy[r] = theirs[fig.name]
    fig.ours[r] = support.median_time(function() for _ = 1, fig.reps do fig.f() end end, 1) / fig.reps
  end
end

local function median(list)
  if #list == 0 then return nil end
  table.sort(list)
  return list[(#list + 1) // 2]
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS")))
print("BLAS mapped by dlbridge: " .. table.concat(blas_libraries(), ", "))
print("BLAS mapped by NumPy:    " .. (#numpy_blas > 0 and table.concat(numpy_blas, ", ") or "?"))
for _, fig in ipairs(figures) do
  local ours, base = median(fig.ours), median(fig.numpy)
  local goal = fig.target and string.format("  (target <= %gx)", fig.target) or ""
  if base then
    print(string.format("%-40s %9.3f ms   NumPy %9.3f ms   ratio %5.2fx%s", fig.label, ours * 1e3,
                        base * 1e3, ours / base, goal))
  else
    print(string.format("%-40s %9.3f ms   (no NumPy figure)", fig.label, ours * 1e3))
  end
end
