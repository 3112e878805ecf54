-- bench/compute.lua: arrays that compute (issue 9). Each figure is the median
-- of ROUNDS rounds of CPU time (os.clock), printed with NumPy's measured in the
-- same run (bench/compute_numpy.py under /usr/bin/python3, Debian's
-- python3-numpy, given the same data and environment) and the ratio.
-- Targets, single-threaded: on 1e7 float32, a + b, a * b, a * 2 + 1, sqrt,
-- exp, a:gt(0) <= 1.0x NumPy; on 10 elements, the cost of a call <= 1.0x
-- NumPy's ufunc call; sum, max, argmax of 1e7 float32 and sum along each dim
-- of 3000x3000 <= 1.0x; broadcast (1000, 10000) + (10000) <= 1.0x; matmul
-- 1024x1024 float32 and float64 <= 1.05x with the BLAS each side has loaded
-- (printed). BLAS threads: set OPENBLAS_NUM_THREADS=1 for single-threaded
-- figures (bench/run does); both sides run with the same setting.
-- Lines "for reference" have no target: a * 2 + 1 with its second step in
-- place (NumPy reuses the temporary a * 2 itself; dlbridge's waits for the GC),
-- and a + b into an existing array, also shown as bytes moved per second next
-- to memcpy's (a rough floor: it depends on how memcpy stores).
-- Operations dlbridge does not have yet print "n/a (not implemented)".
-- BENCH_ROUNDS sets the rounds (default 5).
local dl = require "dlbridge"
local floor = require "bench_floor"
local support = require "support"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local N = 10000000   -- elements of the large float32 operands
local SMALL = 10     -- elements of the small operands
local CALLS = 100000 -- calls per round on the small operands
local SIDE = 3000    -- the square matrix reduced along each dim
local MM = 1024      -- matmul side

local function median(f) return support.median_time(f, ROUNDS) end

-- NumPy's figures by name, and the BLAS libraries it loaded, from the same run.
local numpy, numpy_blas = {}, {}
local py = io.popen("/usr/bin/python3 " .. support.here() .. "/compute_numpy.py " .. ROUNDS
                    .. " 2>/dev/null")
if py then
  for line in py:lines() do
    local lib = line:match("^blas (.+)$")
    local name, seconds = line:match("^(%S+) (%S+)$")
    if lib then
      numpy_blas[#numpy_blas + 1] = lib
    elseif name then
      numpy[name] = tonumber(seconds)
    end
  end
  py:close()
end

-- Prints one figure (seconds, shown in `unit`: "ms" or "ns") against NumPy's.
local function report(name, label, seconds, target, unit)
  local scale = unit == "ns" and 1e9 or 1e3
  unit = unit or "ms"
  local base = numpy[name]
  if seconds == nil then
    print(string.format("%-38s %12s      NumPy %9.3f %s", label, "n/a (not implemented)",
                        (base or 0) * scale, unit))
  elseif base then
    print(string.format("%-38s %9.3f %s   NumPy %9.3f %s   ratio %5.2fx  %s", label,
                        seconds * scale, unit, base * scale, unit, seconds / base,
                        target and string.format("(target <= %gx)", target) or "(for reference)"))
  else
    print(string.format("%-38s %9.3f %s   (no NumPy figure)", label, seconds * scale, unit))
  end
end

-- The median time of f, or nil when dlbridge lacks `what` (a dl.* function
-- name, or a method name looked up on `obj`).
local function timed(what, f, obj)
  local present
  if obj then present = obj[what] ~= nil else present = dl[what] ~= nil end
  if not present then return nil end
  return median(f)
end

-- Quasi-random values in [0, 1): the fractional parts of i * g (as NumPy's side).
local function spread(n, g)
  return (dl.arange(n, {dtype = "float64"}) * g % 1.0):astype("float32")
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS") or "unset"))

local a = spread(N, 0.6180339887498949)
local b = spread(N, 0.7548776662466927)
local centred = a - 0.5
local c = dl.empty({N}, {dtype = "float32"})

print("-- element-wise, 1e7 float32 (each makes its result)")
report("add_1e7", "a + b", median(function() (a + b):delete() end), 1.0)
report("mul_1e7", "a * b", median(function() (a * b):delete() end), 1.0)
report("mul2_add1_1e7", "a * 2 + 1", median(function() (a * 2 + 1):delete() end), 1.0)
report("mul2_add1_1e7", "  the same, + 1 in place (2 calls)", median(function()
  local x = a * 2
  dl.add(x, 1, {out = x}):delete()
end))
report("sqrt_1e7", "dl.sqrt(a)", timed("sqrt", function() dl.sqrt(a):delete() end), 1.0)
report("exp_1e7", "dl.exp(a)", timed("exp", function() dl.exp(a):delete() end), 1.0)
report("gt0_1e7", "a:gt(0) (half true)", median(function() centred:gt(0):delete() end), 1.0)

-- a + b into an existing array moves 3 x 40 MB; memcpy of 40 MB moves 2 x 40 MB
-- (floor.memcpy times its copies between buffers it touched first).
local REPS = 5
local add_out = median(function() for _ = 1, REPS do dl.add(a, b, {out = c}) end end) / REPS
report("add_out_1e7", "dl.add(a, b, {out = c})", add_out)
local memcpys = {}
for r = 1, ROUNDS do memcpys[r] = floor.memcpy(a.nbytes, REPS) / REPS end
table.sort(memcpys)
local memcpy = memcpys[(ROUNDS + 1) // 2]
local add_speed, memcpy_speed = 3 * a.nbytes / add_out, 2 * a.nbytes / memcpy
print(string.format("  %-36s %6.2f GB/s moved   memcpy %6.2f GB/s   speed %4.2fx memcpy's",
                    "dl.add(a, b, {out = c})", add_speed / 1e9, memcpy_speed / 1e9,
                    add_speed / memcpy_speed))

print(string.format("-- per call, %d-element float32 operands (mean of %d calls)", SMALL, CALLS))
local sa, sb = a:narrow(1, 1, SMALL):copy(), b:narrow(1, 1, SMALL):copy()
-- Steady state on both sides (support.median_time_warm; NumPy frees at once).
local function per_call(f) return f and f() / CALLS end
local function warm(f) return support.median_time_warm(f, ROUNDS) end
report("small_add", "a + b", per_call(function()
  return warm(function() for _ = 1, CALLS do local _ = sa + sb end end)
end), 1.0, "ns")
report("small_mul_scalar", "a * 2", per_call(function()
  return warm(function() for _ = 1, CALLS do local _ = sa * 2 end end)
end), 1.0, "ns")
report("small_sqrt", "dl.sqrt(a)", per_call(dl.sqrt and function()
  local sqrt = dl.sqrt
  return warm(function() for _ = 1, CALLS do local _ = sqrt(sa) end end)
end), 1.0, "ns")
report("small_sum", "a:sum()", per_call(sa.sum and function()
  return warm(function() for _ = 1, CALLS do local _ = sa:sum() end end)
end), 1.0, "ns")

-- The floor of any call that returns a new array: a C function that makes one
-- finalizable userdata of an Array's size (576 bytes); in protected mode, as
-- dlbridge makes them under a capped allocator (to raise OUT_OF_MEMORY rather
-- than Lua's plain string), and plainly, as under lauxlib's default one (this
-- lua5.4's, so the figures above).
do
  for _, row in ipairs{{"C call + finalizable userdata", floor.finalizable},
                       {"  the same, made in protected mode", floor.finalizable_protected}} do
    local make = row[2]
    local t = support.median_time_warm(function() for _ = 1, CALLS do local _ = make(576) end end,
                                       ROUNDS) / CALLS
    print(string.format("  %-38s %8.3f ns   (the floor of a call that returns an array)",
                        row[1], t * 1e9))
  end
end

print("-- reductions, float32")
report("sum_1e7", "a:sum() 1e7", timed("sum", function() a:sum() end, a), 1.0)
report("max_1e7", "a:max() 1e7", timed("max", function() a:max() end, a), 1.0)
report("argmax_1e7", "a:argmax() 1e7", timed("argmax", function() a:argmax() end, a), 1.0)
local square = a:narrow(1, 1, SIDE * SIDE):view{SIDE, SIDE}
report("sum_dim1_3000", "m:sum{dim = 1} 3000x3000",
       timed("sum", function() square:sum{dim = 1}:delete() end, a), 1.0)
report("sum_dim2_3000", "m:sum{dim = 2} 3000x3000",
       timed("sum", function() square:sum{dim = 2}:delete() end, a), 1.0)

print("-- broadcasting, float32")
local matrix = a:view{1000, N // 1000}
local row = b:narrow(1, 1, N // 1000)
report("broadcast_add", "(1000, 10000) + (10000)", median(function() (matrix + row):delete() end),
       1.0)

print(string.format("-- matmul %dx%d", MM, MM))
local m32 = a:narrow(1, 1, MM * MM):view{MM, MM}
local n32 = b:narrow(1, 1, MM * MM):view{MM, MM}
local m64, n64 = m32:astype("float64"), n32:astype("float64")
report("matmul_f32", "dl.matmul(a, b) float32",
       timed("matmul", function() dl.matmul(m32, n32):delete() end), 1.05)
report("matmul_f64", "dl.matmul(a, b) float64",
       timed("matmul", function() dl.matmul(m64, n64):delete() end), 1.05)

-- The BLAS libraries mapped into this process (loaded with dlbridge's library).
local libs, seen = {}, {}
local maps = io.open("/proc/self/maps", "r")
if maps then
  for line in maps:lines() do
    local path = line:match("(/%S*blas%S*)$")
    if path and not seen[path] then
      seen[path] = true
      libs[#libs + 1] = path
    end
  end
  maps:close()
end
table.sort(libs)
print("  BLAS in dlbridge's process: " .. (#libs > 0 and table.concat(libs, ", ") or "none"))
print("  BLAS in NumPy's process:    "
      .. (#numpy_blas > 0 and table.concat(numpy_blas, ", ") or "none"))
