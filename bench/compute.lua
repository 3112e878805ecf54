-- bench/compute.lua: arrays that compute (issue 9), against NumPy
-- (bench/compute_numpy.py under /usr/bin/python3, Debian's python3-numpy,
-- given the same data and environment), alternated case by case
-- (bench/support.lua): each figure is the median of ROUNDS rounds of CPU
-- time, with its spread and the ratio of the medians.
-- Targets, single-threaded: on 1e7 float32, a + b, a * b, a * 2 + 1, sqrt,
-- exp, a:gt(0) <= 1.0x NumPy; on 10 elements, the cost of a call <= 1.0x
-- NumPy's ufunc call; sum, max, argmax of 1e7 float32 and sum along each dim
-- of 3000x3000 <= 1.0x; nansum, nanmax, nanmean of 1e6 float32 and float64
-- with 10% NaN <= 1.0x (NumPy's nansum and nanmean copy the array and
-- replace its NaNs first); broadcast (1000, 10000) + (10000) <= 1.0x; matmul
-- 1024x1024 float32 and float64 <= 1.05x with the BLAS each side has loaded
-- (printed). BLAS threads: set OPENBLAS_NUM_THREADS=1 for single-threaded
-- figures (bench/run does); both sides run with the same setting.
-- Lines without a target are for reference: a * 2 + 1 with its second step
-- in place (NumPy reuses the temporary a * 2 itself; dlbridge's waits for
-- the GC), a + b into an existing array, also shown as bytes moved per
-- second next to memcpy's (a rough floor: it depends on how memcpy stores),
-- more per-call figures (slice, dl.zeros, copy, astype), the sum of 1e8
-- float32 (memory-bound: GB/s), row sums of 1000x10000 float32 and float64,
-- tanh float32 and sin, exp float64 of 1e6.
-- Operations dlbridge does not have yet print "n/a (not implemented)".
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_QUICK=1 cuts the sizes.
local dl = require "dlbridge"
local floor = require "bench_floor"
local support = require "support"

local ROUNDS = support.rounds(5)
local N = support.size(10000000, 1000000)     -- elements of the large float32 operands
local SMALL = 10                                -- elements of the small operands
local CALLS = support.size(100000, 10000)     -- calls per round on the small operands
local SIDE = support.size(3000, 1000)         -- the square matrix reduced along each dim
local MM = support.size(1024, 256)            -- matmul side
local BIG = support.size(100000000, 10000000) -- the memory-bound sum (float32)
local MATH = support.size(1000000, 100000)    -- elements of tanh, sin, exp
local NANS = support.size(1000000, 100000)    -- elements of the nan-reductions (10% NaN)
local COLS = 10000                              -- row sums: (N / COLS, COLS)

-- Quasi-random values in [0, 1): the fractional parts of i * g (as NumPy's side).
local function spread(n, g)
  return (dl.arange(n, {dtype = "float64"}) * g % 1.0):astype("float32")
end

local cmp = support.comparison{script = "compute_numpy.py", rounds = ROUNDS, width = 46,
                               args = {N = N, CALLS = CALLS, SIDE = SIDE, MM = MM, BIG = BIG,
                                       MATH = MATH, COLS = COLS, NANS = NANS}}

-- A row: name (NumPy's), label, f (nil: not implemented), target, more options.
local function row(name, label, f, target, opts)
  local c = opts or {}
  c.name, c.label, c.f, c.target = name, label, f, target
  return cmp:row(c)
end

-- A per-call row: `body` runs its operation CALLS times, inline, in steady
-- state (no full collection between rounds; NumPy frees at once).
local function per_call(name, label, body, target)
  return row(name, label, body, target, {div = CALLS, steady = true, unit = "ns"})
end

-- The speed of moving `bytes` in a result's median time.
local function gbps(bytes)
  return function(r)
    return string.format("%.2f GB/s, NumPy %.2f GB/s", bytes / r.ours_median / 1e9,
                         r.numpy_median and bytes / r.numpy_median / 1e9 or 0)
  end
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), OPENBLAS_NUM_THREADS=%s",
                    dl.version, _VERSION, ROUNDS, os.getenv("OPENBLAS_NUM_THREADS") or "unset"))

local count = support.count
local LARGE = ", " .. count(N) .. " f32" -- the labels' sizes
local SMALL_OPS = ", 10 f32, per call"
local a = spread(N, 0.6180339887498949)
local b = spread(N, 0.7548776662466927)
local centred = a - 0.5
local c = dl.empty({N}, {dtype = "float32"})

cmp:header("element-wise, " .. count(N) .. " float32 (each makes its result)")
row("add_1e7", "a + b" .. LARGE, function() (a + b):delete() end, 1.0)
row("mul_1e7", "a * b" .. LARGE, function() (a * b):delete() end, 1.0)
row("mul2_add1_1e7", "a * 2 + 1" .. LARGE, function() (a * 2 + 1):delete() end, 1.0)
row("mul2_add1_1e7", "a * 2 + 1" .. LARGE .. ", + 1 in place", function()
  local x = a * 2
  dl.add(x, 1, {out = x}):delete()
end)
row("sqrt_1e7", "dl.sqrt(a)" .. LARGE, dl.sqrt and function() dl.sqrt(a):delete() end, 1.0)
row("exp_1e7", "dl.exp(a)" .. LARGE, dl.exp and function() dl.exp(a):delete() end, 1.0)
row("gt0_1e7", "a:gt(0)" .. LARGE .. " (half true)", function() centred:gt(0):delete() end, 1.0)

-- a + b into an existing array moves 3 x 40 MB; memcpy of 40 MB moves 2 x 40 MB
-- (floor.memcpy times its copies between buffers it touched first).
local REPS = 5
local add_out = row("add_out_1e7", "dl.add(a, b, {out = c})" .. LARGE,
                    function() dl.add(a, b, {out = c}) end,
                    nil, {reps = REPS, note = gbps(3 * a.nbytes)})
local memcpys = {}
for r = 1, ROUNDS do memcpys[r] = floor.memcpy(a.nbytes, REPS) / REPS end
local memcpy = support.median(memcpys)
if add_out.ours_median then
  local add_speed, memcpy_speed = 3 * a.nbytes / add_out.ours_median, 2 * a.nbytes / memcpy
  print(string.format("  %-38s %6.2f GB/s moved   memcpy %6.2f GB/s   speed %4.2fx memcpy's",
                      "dl.add(a, b, {out = c})", add_speed / 1e9, memcpy_speed / 1e9,
                      add_speed / memcpy_speed))
end

cmp:header(string.format("%s per call, %d-element float32 operands (mean of %d calls)",
                         "time", SMALL, CALLS))
local sa, sb = a:narrow(1, 1, SMALL):copy(), b:narrow(1, 1, SMALL):copy()
per_call("small_add", "a + b" .. SMALL_OPS, function()
  for _ = 1, CALLS do local _ = sa + sb end
end, 1.0)
per_call("small_mul_scalar", "a * 2" .. SMALL_OPS, function()
  for _ = 1, CALLS do local _ = sa * 2 end
end, 1.0)
do
  local sqrt = dl.sqrt
  per_call("small_sqrt", "dl.sqrt(a)" .. SMALL_OPS, sqrt and function()
    for _ = 1, CALLS do local _ = sqrt(sa) end
  end, 1.0)
end
per_call("small_sum", "a:sum()" .. SMALL_OPS, sa.sum and function()
  for _ = 1, CALLS do local _ = sa:sum() end
end, 1.0)
per_call("small_slice", "a:slice(1, 2, 5)" .. SMALL_OPS .. " (a[1:5])", function()
  for _ = 1, CALLS do local _ = sa:slice(1, 2, 5) end
end)
per_call("small_zeros", "dl.zeros(10, {dtype = 'float32'}), per call", function()
  for _ = 1, CALLS do local _ = dl.zeros(SMALL, {dtype = "float32"}) end
end)
per_call("small_copy", "a:copy()" .. SMALL_OPS, function()
  for _ = 1, CALLS do local _ = sa:copy() end
end)
per_call("small_astype", "a:astype('float64')" .. SMALL_OPS, function()
  for _ = 1, CALLS do local _ = sa:astype("float64") end
end)

-- The floor of any call that returns a new array: a C function that makes one
-- finalizable userdata of an Array's size (16 bytes: its tag and a pointer to
-- its pooled record, src/lua/records.c); in protected mode, as dlbridge makes
-- them under a capped allocator (to raise OUT_OF_MEMORY rather than Lua's
-- plain string), and plainly, as under lauxlib's default one (this lua5.4's,
-- so the figures above).
do
  for _, r in ipairs{{"C call + finalizable userdata", floor.finalizable},
                     {"  the same, made in protected mode", floor.finalizable_protected}} do
    local make = r[2]
    local t = support.median_time_warm(function() for _ = 1, CALLS do local _ = make(16) end end,
                                       ROUNDS) / CALLS
    print(string.format("  %-38s %8.3f ns   (the floor of a call that returns an array)",
                        r[1], t * 1e9))
  end
  -- a:copy()'s floor: a method call making that userdata, which owns a
  -- malloc'd block of the 40 bytes it copies (no memory account, no dtype).
  local u = floor.copier()
  local t = support.median_time_warm(function() for _ = 1, CALLS do local _ = u:copy() end end,
                                     ROUNDS) / CALLS
  print(string.format("  %-38s %8.3f ns   (the floor of a:copy() of 10 float32)",
                      "u:copy(): that + a 40-byte block", t * 1e9))
  -- The same for a type that also has a[i], as an Array does: its __index
  -- must be a function (a table cannot answer a[i]), so every a:name() is a
  -- C call before the method's own; and a view method's floor (a:slice(1, 2,
  -- 5)): that lookup, three integer arguments read, a finalizable userdata.
  local w = floor.indexed_copier()
  t = support.median_time_warm(function() for _ = 1, CALLS do local _ = w:copy() end end,
                               ROUNDS) / CALLS
  print(string.format("  %-38s %8.3f ns   (the floor of a:copy() for a type with a[i])",
                      "the same, the method via a C __index", t * 1e9))
  t = support.median_time_warm(function() for _ = 1, CALLS do local _ = w:view(1, 2, 5) end end,
                               ROUNDS) / CALLS
  print(string.format("  %-38s %8.3f ns   (the floor of a:slice(1, 2, 5))",
                      "u:view(1, 2, 5) via a C __index", t * 1e9))
  -- dl.zeros' floor: the options table the script builds at each call
  -- (Lua's own cost) + a C call making that userdata with a zeroed 40-byte
  -- block.
  t = support.median_time_warm(function()
    for _ = 1, CALLS do local _ = floor.zeros(SMALL, {dtype = "float32"}) end
  end, ROUNDS) / CALLS
  print(string.format("  %-38s %8.3f ns   (the floor of dl.zeros(10, {dtype = 'float32'}))",
                      "floor.zeros(10, {dtype = 'float32'})", t * 1e9))
end

cmp:header("reductions")
row("sum_1e7", "a:sum() " .. count(N) .. " float32", a.sum and function() a:sum() end, 1.0)
row("max_1e7", "a:max() " .. count(N) .. " float32", a.max and function() a:max() end, 1.0)
row("argmax_1e7", "a:argmax() " .. count(N) .. " float32",
    a.argmax and function() a:argmax() end, 1.0)
row("sum_1e8", "a:sum() " .. count(BIG) .. " float32 (memory-bound)", nil, nil,
    {make = function()
       local parts = {}
       for i = 1, BIG // N do parts[i] = a end
       local big = dl.concat(parts)
       return function() big:sum() end
     end, note = gbps(BIG * 4)})
local square = a:narrow(1, 1, SIDE * SIDE):view{SIDE, SIDE}
row("sum_dim1_3000", string.format("m:sum{dim = 1} %dx%d float32", SIDE, SIDE),
    a.sum and function() square:sum{dim = 1}:delete() end, 1.0)
row("sum_dim2_3000", string.format("m:sum{dim = 2} %dx%d float32", SIDE, SIDE),
    a.sum and function() square:sum{dim = 2}:delete() end, 1.0)
local wide = a:view{N // COLS, COLS}
row("rowsum_float32", string.format("m:sum{dim = 2} %dx%d float32", N // COLS, COLS),
    function() wide:sum{dim = 2}:delete() end)
row("rowsum_float64", string.format("m:sum{dim = 2} %dx%d float64", N // COLS, COLS), nil, nil,
    {make = function()
       local wide64 = wide:astype("float64")
       return function() wide64:sum{dim = 2}:delete() end
     end})

cmp:header("reductions leaving NaNs out, " .. count(NANS) .. " elements, 10% NaN")
-- NaN where the other quasi-random sequence is below 0.1 (as NumPy's side).
local gappy32 = dl.where(b:narrow(1, 1, NANS):lt(0.1), 0 / 0, a:narrow(1, 1, NANS))
local gappy64 = gappy32:astype("float64")
for _, f in ipairs{"nansum", "nanmax", "nanmean"} do
  for _, x in ipairs{{"float32", gappy32}, {"float64", gappy64}} do
    local data = x[2]
    row(f .. "_" .. x[1], string.format("a:%s() %s %s", f, count(NANS), x[1]),
        data[f] and function() return data[f](data) end, 1.0)
  end
end

cmp:header("math functions, " .. count(MATH) .. " elements")
local m32 = a:narrow(1, 1, MATH)
local m64 = m32:astype("float64")
row("tanh_float32", "dl.tanh(a) " .. count(MATH) .. " float32",
    dl.tanh and function() dl.tanh(m32):delete() end)
row("sin_float64", "dl.sin(a) " .. count(MATH) .. " float64",
    dl.sin and function() dl.sin(m64):delete() end)
row("exp_float64", "dl.exp(a) " .. count(MATH) .. " float64",
    dl.exp and function() dl.exp(m64):delete() end)

cmp:header("broadcasting, float32")
local matrix = a:view{1000, N // 1000}
local vec = b:narrow(1, 1, N // 1000)
row("broadcast_add", string.format("(1000, %d) + (%d)", N // 1000, N // 1000),
    function() (matrix + vec):delete() end, 1.0)

cmp:header(string.format("matmul %dx%d", MM, MM))
local p32 = a:narrow(1, 1, MM * MM):view{MM, MM}
local q32 = b:narrow(1, 1, MM * MM):view{MM, MM}
local p64, q64 = p32:astype("float64"), q32:astype("float64")
row("matmul_f32", string.format("dl.matmul(a, b) %d^2 float32", MM),
    dl.matmul and function() dl.matmul(p32, q32):delete() end, 1.05)
row("matmul_f64", string.format("dl.matmul(a, b) %d^2 float64", MM),
    dl.matmul and function() dl.matmul(p64, q64):delete() end, 1.05)

local libs = support.blas_libraries()
print("  BLAS in dlbridge's process: " .. (#libs > 0 and table.concat(libs, ", ") or "none"))
print("  BLAS in NumPy's process:    " .. (cmp:value("blas") or "none"))
cmp:finish()
