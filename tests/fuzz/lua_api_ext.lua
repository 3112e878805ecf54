-- lua_api_ext.lua -- random Lua API sequences against dlbridge (ctest: fuzz.lua_api_ext).
--   lua5.4 tests/fuzz/lua_api_ext.lua SEED [ITERATIONS] [trace]
-- Every public function with hostile arguments, deleted arrays, finalizers that
-- delete operands, coroutines, compute, reductions, matmul, joins and files
-- (scratch files in $FUZZ_TMP, default ./work, which must exist). Every call is
-- pcall'ed; a failure that is not a dlbridge.Error is logged as
--   PLAIN <op> :: <message>
-- and a few oracles (round trips, deleted-array codes) log ORACLE lines. The exit
-- status is 1 when any such line was printed and FUZZ_STRICT is set, else 0 (the
-- sanitizers decide crashes and leaks).
-- Seeds 49 and 81 (79 iterations) once ended in "attempt to call a nil value"
-- from an Error's __concat: Debian's Lua 5.4.4 runs on a freed stack after a
-- __concat call that moves the stack (src/lua/error.c), so Errors have none.
local seed = tonumber(arg[1]) or 1
local ITERS = tonumber(arg[2]) or 3000
local TRACE = arg[3] == "trace"
math.randomseed(seed)
local R = math.random
local dl = require "dlbridge"
local has_tb, tb = pcall(require, "testbackend")

local devices = { "cpu", "cpu:0", "cpu:1", "nope", "", "cpu:-1", "cpu:99999999999", ":", "cpu:x" }
if has_tb then
  local sfx = tostring(seed):gsub("%D", "")
  local e1, e2, e3 = "eo" .. sfx, "ex" .. sfx, "eh" .. sfx
  pcall(tb.register, { name = e1, devices = 2 })                          -- opaque
  pcall(tb.register, { name = e2, exportable = true, copy_within = true }) -- exportable
  pcall(tb.register, { name = e3, host_pointer = true, exportable = true })
  pcall(tb.register, { name = "ez" .. sfx, devices = 0 })                  -- unavailable
  for _, n in ipairs { e1, e2, e3, e1 .. ":1", e1 .. ":2", "ez" .. sfx } do devices[#devices + 1] = n end
  ENGINES = { e1, e2, e3 }
  -- A host's memory limit, as a sandbox sets one: hostile sizes then fail with
  -- OUT_OF_MEMORY instead of filling the machine (dl.arange(-2^31, 2^31) is
  -- 32 GiB; seed 4 once made the kernel kill the run at 24 GiB).
  tb.set_memory_limit(1 << 30)
end

local dtypes = dl.dtypes()
local plain, oracle, counts = {}, {}, { ok = 0, coded = 0, plain = 0 }
local codes = {}
local pool, caps, deleted = {}, {}, setmetatable({}, { __mode = "k" })
local trace = {}

local function pick(t) return t[R(#t)] end
local function chance(p) return R() < p end

local weird_numbers = { 0, 1, -1, 2, 3, -2, 4, 5, 7, 32, 33, -33, math.maxinteger, math.mininteger,
  math.maxinteger - 1, 2 ^ 31, -2 ^ 31, 2 ^ 32, 2 ^ 53, 2 ^ 63, -2 ^ 63, 2 ^ 64, 1.5, -0.5, 0.0, -0.0,
  3.0, 0 / 0, 1 / 0, -1 / 0, 1e308, -1e308, 5e-324, 65520, 256, -129, 2 ^ 62, 1 << 62, 1 << 61, 1 << 40 }

local function rint()
  if chance(0.7) then return R(-4, 6) end
  return pick(weird_numbers)
end

local function rdtype()
  if chance(0.92) then return pick(dtypes) end
  return pick { "float", "int128", "", 5, nil, {}, "FLOAT32", "float32\0x" }
end

local function rshape(allow_bad)
  if allow_bad and chance(0.15) then
    local k = R(1, 9)
    if k == 1 then return rint() end
    if k == 2 then local t = {} for i = 1, 33 do t[i] = 1 end return t end
    if k == 3 then return { 2, dtype = "int32" } end
    if k == 4 then return { 1 << 31, 1 << 31, 1 << 31 } end
    if k == 5 then return { -1, 2 } end
    if k == 6 then return { "2", 3 } end
    if k == 7 then return setmetatable({}, { __len = function() return 5 end, __index = function() return 2 end }) end
    if k == 8 then return { 2, nil, 3 } end
    return { math.maxinteger, 0 }
  end
  local n = R(0, chance(0.1) and 8 or 4)
  local t = {}
  for i = 1, n do t[i] = chance(0.1) and 0 or R(1, 4) end
  if chance(0.05) then t[1] = 32 end
  return t
end

local function rscalar()
  local k = R(1, 12)
  if k <= 4 then return rint() end
  if k == 5 then return R() * 100 - 50 end
  if k == 6 then return chance(0.5) end
  if k == 7 then return { re = rint(), im = chance(0.5) and rint() or nil } end
  if k == 8 then return pick { "1", nil, {}, function() end, { re = "x" }, { im = {} } } end
  if k == 9 and #pool > 0 then return pick(pool) end
  return pick(weird_numbers)
end

local function rnested(shape, depth)
  depth = depth or 1
  if depth > #shape then return rscalar() end
  local t = {}
  for i = 1, shape[depth] do t[i] = rnested(shape, depth + 1) end
  return t
end

-- What the proxy data's __index raises: dlbridge reads proxies through their
-- metamethods and lets their errors propagate unchanged.
PROXY_ERROR = setmetatable({}, { __tostring = function() return "PROXY_ERROR" end })

local function rdata()
  local k = R(1, 14)
  if k <= 7 then
    local s = rshape(false)
    local sc = R(1, 4)
    local function leaf()
      if sc == 1 then return R(-100, 100) elseif sc == 2 then return R() elseif sc == 3 then return chance(0.5)
      else return rscalar() end
    end
    local function build(d)
      if d > #s then return leaf() end
      local t = {}
      for i = 1, s[d] do t[i] = build(d + 1) end
      return t
    end
    return build(1)
  end
  if k == 8 then local t = { 1, 2 }; t[3] = t; return t end                -- cyclic
  if k == 9 then local t = {}; t[1] = t; return t end                      -- self-nesting
  if k == 10 then local t = 1 for _ = 1, R(30, 200) do t = { t } end return t end -- deep
  if k == 11 then return { { 1, 2 }, { 3 } } end                           -- ragged
  if k == 12 then return setmetatable({ 1, 2, 3 }, { __index = function() error(PROXY_ERROR) end, __len = function() return 10 end }) end
  if k == 13 then return { 1, 2, x = 3 } end
  return rscalar()
end

local function ropts(kind)
  local k = R(1, 10)
  if k <= 3 then return nil end
  if k == 4 then return { dtype = rdtype() } end
  if k == 5 then return { device = pick(devices) } end
  if k == 6 then return { dtype = rdtype(), device = pick(devices) } end
  if k == 7 then return { dtyp = "int32" } end
  if k == 8 then return pick { 5, "x", true } end
  if k == 9 then return { [1] = "int32" } end
  return {}
end

-- Deleter-in-finalizer tricks: objects whose __gc deletes/creates arrays.
local function gc_bomb()
  local victim = pick(pool)
  setmetatable({}, { __gc = function()
    if victim and R() < 0.7 then pcall(victim.delete, victim) end
    if R() < 0.3 then pool[#pool + 1] = select(2, pcall(dl.zeros, { R(0, 3) })) end
    if R() < 0.2 then pcall(function() return victim:copy() end) end
    if R() < 0.1 and #caps > 0 then pcall(dl.from_dlpack, pick(caps)) end
  end })
end

local function rarray()
  if #pool == 0 or chance(0.1) then
    local ok, a = pcall(dl.arange, R(0, 24), { dtype = pick(dtypes) })
    if ok then pool[#pool + 1] = a return a end
    a = dl.zeros { 2, 3 }
    pool[#pool + 1] = a
    return a
  end
  return pick(pool)
end

local function ranything()
  local k = R(1, 16)
  if k <= 6 then return rarray() end
  if k == 7 and #caps > 0 then return pick(caps) end
  if k == 8 then return rscalar() end
  if k == 9 then return io.stdout end
  if k == 10 then return coroutine.create(function() end) end
  if k == 11 then return setmetatable({}, { __index = function(_, key) if key == "__dlpack" then return function(self, o) return rarray():to_dlpack(o) end end end }) end
  if k == 12 then return { __dlpack = function(self, o) if o then error("no versioned") end return rarray():to_dlpack { max_version = { 0, 0 } } end } end
  if k == 13 then return { __dlpack = function() return 42 end } end
  if k == 14 then return { __dlpack = function(self) rarray():delete() collectgarbage() return rarray():__dlpack() end } end
  if k == 15 then return setmetatable({}, { __index = function() error({}) end }) end
  return nil
end

local function add(a) if dl.is_array(a) then pool[#pool + 1] = a if #pool > 60 then table.remove(pool, R(#pool)) end end end
local function addcap(c) if type(c) == "userdata" and not dl.is_array(c) then caps[#caps + 1] = c if #caps > 20 then table.remove(caps, 1) end end end

local methods = { "get", "set", "delete", "view", "reshape", "transpose", "permute", "narrow", "select",
  "slice", "squeeze", "unsqueeze", "expand", "contiguous", "is_contiguous", "copy", "astype", "fill",
  "copy_from", "totable", "tobytes", "to_dlpack", "__dlpack", "__dlpack_device", "to" }
local attrs = { "shape", "strides", "ndim", "size", "dtype", "itemsize", "nbytes", "device", "backend", "readonly", "nosuch" }

local function rargs(n)
  local t = {}
  for i = 1, n do
    local k = R(1, 6)
    if k <= 3 then t[i] = rint() elseif k == 4 then t[i] = rshape(true) elseif k == 5 then t[i] = rscalar() else t[i] = ranything() end
  end
  return t
end

local function rexport_opts()
  local k = R(1, 12)
  if k <= 3 then return nil end
  local o = {}
  if chance(0.4) then o.max_version = pick { { 0, 0 }, { 1, 0 }, { 1, 3 }, { 1, 99 }, { 2, 0 }, { -1, 0 }, { 1 }, { "1", "0" }, 5, { 2 ^ 40, 0 }, { 1.5, 0 } } end
  if chance(0.3) then o.dl_device = pick { { 1, 0 }, { 2, 0 }, { 12, 0 }, { 12, 1 }, { 1, 1 }, { -1, 0 }, { 1 }, { 2 ^ 33, 0 } } end
  if chance(0.3) then o.copy = pick { true, false, "yes", 0 } end
  if chance(0.1) then o.stream = pick { 0, 1, -1, 1.5, "x" } end
  if chance(0.2) then o.fallback = pick { "cpu", "gpu", 1 } end
  if chance(0.05) then o.bogus = 1 end
  return o
end

-- Operation table: each returns (name, function) -- the function runs under pcall.
local ops = {}
local function op(w, name, f) for _ = 1, w do ops[#ops + 1] = { name, f } end end

op(3, "dl.zeros", function() return dl.zeros(rshape(true), ropts()) end)
op(2, "dl.ones", function() return dl.ones(rshape(true), ropts()) end)
op(2, "dl.empty", function() return dl.empty(rshape(true), ropts()) end)
op(3, "dl.full", function() return dl.full(rshape(true), rscalar(), ropts()) end)
op(6, "dl.array", function() return dl.array(rdata(), ropts()) end)
op(2, "dl.array(arr)", function() return dl.array(rarray(), ropts()) end)
op(3, "dl.arange", function() local a = rargs(R(0, 4)) return dl.arange(table.unpack(a)) end)
op(2, "dl.arange2", function() return dl.arange(rint(), rint(), pick { 1, -1, 2, 0.5, rint() }, ropts()) end)
op(2, "dl.linspace", function() return dl.linspace(rint(), rint(), pick { 0, 1, 5, rint() }, ropts()) end)
op(3, "dl.frombytes", function()
  local a = rarray()
  local s = chance(0.7) and select(2, pcall(a.tobytes, a)) or pick { "", "abc", string.rep("\1", 16), string.rep("\2", 8) }
  if type(s) ~= "string" then s = "xxxxxxxx" end
  return dl.frombytes(s, chance(0.8) and (a.dtype or "int8") or rdtype(), chance(0.5) and nil or rshape(true))
end)
op(8, "index", function() local a = rarray() local k = chance(0.5) and rint() or pick(attrs) return a[k] end)
op(4, "newindex", function() local a = rarray() a[chance(0.9) and rint() or pick { "x", {}, true }] = chance(0.7) and rscalar() or rdata() end)
op(2, "len", function() return #rarray() end)
op(3, "tostring", function() return tostring(chance(0.9) and rarray() or pick(caps) or 1) end)
op(30, "method", function()
  local m = pick(methods)
  local a = rarray()
  local self = chance(0.93) and a or ranything()
  local f = a[m]
  if m == "to_dlpack" or m == "__dlpack" then return f(self, rexport_opts()) end
  if m == "to" then return f(self, pick(devices), chance(0.5) and { copy = chance(0.5), donate = chance(0.3) } or pick { nil, { x = 1 }, 3 }) end
  if m == "astype" then return f(self, rdtype()) end
  if m == "view" or m == "reshape" or m == "expand" then
    if chance(0.6) and dl.is_array(self) and self.size then
      local s = self.shape
      if chance(0.5) then
        local n = self.size
        local t = chance(0.5) and { n } or { -1 }
        if n % 2 == 0 and n > 0 then t = { 2, -1 } end
        return f(self, t)
      end
      if m == "expand" then table.insert(s, 1, R(0, 3)) for i = 1, #s do if s[i] == 1 and chance(0.5) then s[i] = R(0, 5) end end return f(self, s) end
    end
    return f(self, rshape(true))
  end
  if m == "permute" then
    local n = dl.is_array(self) and select(2, pcall(function() return self.ndim end)) or 2
    if type(n) ~= "number" then n = 2 end
    local p = {}
    for i = 1, n do p[i] = i end
    for i = n, 2, -1 do local j = R(i) p[i], p[j] = p[j], p[i] end
    if chance(0.2) then p[R(math.max(n, 1))] = rint() end
    return f(self, p)
  end
  if m == "copy_from" or m == "fill" then return f(self, chance(0.5) and rscalar() or (chance(0.5) and rarray() or rdata())) end
  if m == "get" or m == "set" then
    local nd = (dl.is_array(self) and select(2, pcall(function() return self.ndim end))) or 1
    if type(nd) ~= "number" then nd = 1 end
    local args = {}
    local n = chance(0.8) and nd or R(0, 5)
    for i = 1, n do args[i] = chance(0.8) and R(-3, 4) or rint() end
    if m == "set" then args[#args + 1] = rscalar() end
    return f(self, table.unpack(args))
  end
  return f(self, table.unpack(rargs(R(0, 4))))
end)
op(3, "from_dlpack", function()
  local x
  local k = R(1, 4)
  if k == 1 and #caps > 0 then x = pick(caps) elseif k == 2 then x = rarray() else x = ranything() end
  return dl.from_dlpack(x, chance(0.7) and nil or pick { { copy = true }, { copy = false }, { device = pick(devices) }, { device = pick(devices), copy = pick { true, false } }, { bad = 1 }, 7 })
end)
op(4, "export", function() local c = rarray():to_dlpack(rexport_opts()) addcap(c) return c end)
op(2, "device_put", function() return dl.device_put(rarray(), pick(devices), chance(0.5) and { copy = chance(0.5), donate = chance(0.3) } or nil) end)
op(1, "backends", function() return dl.backends() end)
op(2, "delete", function() local a = rarray() a:delete() deleted[a] = true end)
op(2, "close", function()
  local a <close> = rarray()
  deleted[a] = true
  return a:copy()
end)
op(2, "gc", function() if chance(0.5) then collectgarbage("step", R(0, 50)) else collectgarbage() end end)
op(2, "gcbomb", function() for _ = 1, R(1, 4) do gc_bomb() end end)
op(1, "capsule attrs", function() local c = pick(caps) if c then return c.versioned, c.version, c.consumed, c.device, c.nosuch, c[1] end end)
op(1, "error obj", function()
  local ok, e = pcall(dl.zeros, { -1 })
  assert(not ok and dl.is_error(e))
  -- An Error does not concatenate: Lua's own error, never a call on a freed stack.
  local okc, why = pcall(function() return tostring(e) .. e .. "x" end)
  if okc or not tostring(why):find("attempt to concatenate a dlbridge.Error value", 1, true) then
    oracle[#oracle + 1] = "concatenating an Error gave " .. tostring(why)
  end
  local s = tostring(e) .. "x"
  return e:is("SHAPE"), e.is(5), dl.E.SHAPE, s
end)
op(1, "try/safe", function() return dl.try(dl.zeros, rshape(true)), dl.safe.array(rdata()) end)
if has_tb then
  op(2, "fail_at", function() tb.fail_at(pick(ENGINES), R(1, 6), pick { "OUT_OF_MEMORY", "BACKEND_FAILURE" }, R(1, 999)) end)
end

-- ===== EXTENSION (2026-12 reliability pass): compute, reductions, matmul, join, files =====
local BIN_OPS = { "add", "sub", "mul", "div", "floor_divide", "mod", "pow", "maximum", "minimum",
  "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "atan2", "equal", "not_equal",
  "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor" }
local UN_OPS = { "abs", "neg", "sign", "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil", "trunc", "round",
  "isnan", "isinf", "isfinite", "bitwise_not", "logical_not", "invert", "negative" }
local RED_OPS = { "sum", "prod", "mean", "std", "var", "min", "max", "argmin", "argmax", "all", "any", "count_nonzero",
  "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmin", "nanmax", "nanargmin", "nanargmax" }
-- ops whose results must not depend on the operands' layout (bit-exact)
local EXACT = { add = 1, sub = 1, mul = 1, div = 1, floor_divide = 1, mod = 1, maximum = 1, minimum = 1,
  bitwise_and = 1, bitwise_or = 1, bitwise_xor = 1, left_shift = 1, right_shift = 1, equal = 1, not_equal = 1,
  less = 1, less_equal = 1, greater = 1, greater_equal = 1, logical_and = 1, logical_or = 1, logical_xor = 1,
  abs = 1, neg = 1, sign = 1, sqrt = 1, floor = 1, ceil = 1, trunc = 1, round = 1, isnan = 1, isinf = 1,
  isfinite = 1, bitwise_not = 1, logical_not = 1, invert = 1, negative = 1, where = 1, clip = 1 }
local INT_DT = { int8 = 1, int16 = 1, int32 = 1, int64 = 1, uint8 = 1, uint16 = 1, uint32 = 1, uint64 = 1, bool = 1 }
local OPERATORS = { "+", "-", "*", "/", "//", "%", "^", "&", "|", "~", "<<", ">>", "unm", "bnot", "<", "<=" }

local hostile_vals = { 0, -1, 1, 0 / 0, 1 / 0, -1 / 0, math.mininteger, math.maxinteger, 2 ^ 63, -2 ^ 63,
  2 ^ 64, 1e308, -1e308, 63, 64, 65, -64, 127, -128, 255, 32767, -32768, 2147483647, -2147483648, 4294967295,
  1.5, -0.5, 5e-324, 65504, 65520, 3.4e38, 1e39 }

local function prod(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end

-- an array of shape s and dtype dt with interesting values (zeros, -1, extremes, NaN)
local function rvalues(s, dt)
  local n = prod(s)
  if n > 4096 then n = 0 s = { 0 } end
  local a
  local k = R(1, 5)
  if k == 1 then a = dl.arange(n, { dtype = "float64" }) - (n // 2)
  elseif k == 2 then
    local t = {}
    for i = 1, n do t[i] = pick(hostile_vals) end
    a = dl.array(n > 0 and t or dl.zeros { 0 })
  elseif k == 3 then a = dl.full(n, pick(hostile_vals))
  elseif k == 4 then a = dl.zeros(n)
  else local t = {} for i = 1, n do t[i] = R(-3, 3) end a = dl.array(n > 0 and t or dl.zeros { 0 }) end
  -- cast element-wise (astype may raise VALUE for NaN->int etc.; fall back to arange)
  local ok, b = pcall(a.astype, a, dt)
  if not ok then b = dl.arange(n, { dtype = dt ~= "bool" and dt or "int8" }) if dt == "bool" then b = b:astype("bool") end end
  return b:reshape(#s > 0 and s or {})
end

-- a random layout holding the same logical values as `a`
local function rlayout(a)
  local ok, r = pcall(function()
    local k = R(1, 8)
    local nd = a.ndim
    if k == 1 and nd >= 2 then
      -- transposed storage: copy of the transpose, then transpose back
      local p = {} for i = 1, nd do p[i] = nd + 1 - i end
      return a:permute(p):copy():permute(p)
    elseif k == 2 and nd >= 1 then
      -- reversed storage along dim 1 (negative stride)
      return a:slice(1, nil, nil, -1):copy():slice(1, nil, nil, -1)
    elseif k == 3 and nd >= 1 then
      -- strided (every other element) storage
      local s = a.shape
      local s2 = {} for i = 1, nd do s2[i] = s[i] end
      s2[nd] = s2[nd] * 2
      local big = dl.zeros(s2, { dtype = a.dtype })
      local v = big:slice(nd, 1, nil, 2)
      v:copy_from(a)
      return v
    elseif k == 4 then
      -- broadcast (stride 0) when there is a size-1 dim
      local s = a.shape
      for i = 1, nd do if s[i] == 1 then local s2 = a.shape s2[i] = R(0, 3) return a:expand(s2) end end
      return a
    elseif k == 5 then return a:copy()
    end
    return a
  end)
  if ok and dl.is_array(r) then return r end
  return a
end

-- a shape that broadcasts against s (or, sometimes, does not)
local function rbshape(s)
  local t = {}
  if chance(0.08) then return rshape(false) end
  local drop = R(0, #s)
  for i = drop + 1, #s do t[#t + 1] = chance(0.3) and 1 or s[i] end
  if chance(0.1) then table.insert(t, 1, R(1, 3)) end
  return t
end

local function rshape_small()
  local n = R(0, 4)
  local t = {}
  for i = 1, n do t[i] = chance(0.08) and 0 or R(1, 4) end
  return t
end

local function roperand(s)
  local k = R(1, 10)
  if k == 1 then return pick(hostile_vals) end
  if k == 2 then return pick { true, false, { re = 1, im = -1 }, { re = 0 / 0 }, "3", {}, { 1, 2 }, { { 1 }, { 2 } } } end
  if k == 3 then return rarray() end
  if k == 4 then local a = rarray() return select(2, pcall(rlayout, a)) end
  return rlayout(rvalues(s, pick(dtypes)))
end

-- deleted arrays and views whose base was deleted
local function rdeadish(s)
  local a = rvalues(s, pick(dtypes))
  local v = a:view(a.shape)
  a:delete() deleted[a] = true
  return a, v
end

local function rout(x, y)
  local k = R(1, 12)
  if k <= 3 then return nil end
  if k == 4 and dl.is_array(x) then return x end
  if k == 5 and dl.is_array(y) then return y end
  if k == 6 and dl.is_array(x) then return select(2, pcall(function() return x:slice(1, nil, nil, -1) end)) end
  if k == 7 and dl.is_array(x) then return select(2, pcall(function() return x:T() end)) end
  if k == 8 then return rarray() end
  if k == 9 then return pick { 5, "x", true, {} } end
  if k == 10 and dl.is_array(x) then local d = select(2, rdeadish(x.shape)) return d end
  if k == 11 and dl.is_array(x) then return select(2, pcall(dl.zeros, x.shape, { dtype = pick(dtypes) })) end
  return nil
end

local function bytes_of(a)
  local ok, b = pcall(a.tobytes, a)
  if ok then return b end
end

local function same_result(r1, r2, what)
  if not (dl.is_array(r1) and dl.is_array(r2)) then
    if type(r1) ~= "userdata" and type(r2) ~= "userdata" then
      local eq = r1 == r2 or (r1 ~= r1 and r2 ~= r2)
      if type(r1) == "table" and type(r2) == "table" then eq = true end
      if not eq then oracle[#oracle + 1] = what .. (" scalar %s vs %s"):format(tostring(r1), tostring(r2)) end
    end
    return
  end
  if r1.dtype ~= r2.dtype then oracle[#oracle + 1] = what .. " dtype " .. r1.dtype .. " vs " .. r2.dtype return end
  local s1, s2 = table.concat(r1.shape, "x"), table.concat(r2.shape, "x")
  if s1 ~= s2 then oracle[#oracle + 1] = what .. " shape " .. s1 .. " vs " .. s2 return end
  local b1, b2 = bytes_of(r1), bytes_of(r2)
  if b1 and b2 and b1 ~= b2 then
    -- NaN payload/sign differences are tolerated: compare isnan masks and non-NaN values
    local okn, n1 = pcall(function() return r1:totable() end)
    local okm, n2 = pcall(function() return r2:totable() end)
    local function flat(t, o) if type(t) ~= "table" or t.re ~= nil then o[#o + 1] = t else for i = 1, #t do flat(t[i], o) end end return o end
    if okn and okm then
      local f1, f2 = flat(n1, {}), flat(n2, {})
      for i = 1, #f1 do
        local x, y = f1[i], f2[i]
        if type(x) == "table" then x, y = (x.re or 0) + 1e-300 * (x.im or 0), (y.re or 0) + 1e-300 * (y.im or 0) end
        if not (x == y or (x ~= x and y ~= y)) then
          oracle[#oracle + 1] = what .. (" differs at flat %d: %s vs %s dtype=%s shape=%s"):format(i, tostring(f1[i] and (type(f1[i])=="table" and (f1[i].re..","..f1[i].im) or f1[i])), tostring(f2[i] and (type(f2[i])=="table" and (f2[i].re..","..f2[i].im) or f2[i])), r1.dtype, s1)
          return
        end
      end
    end
  end
end

op(12, "binop", function()
  local name = pick(BIN_OPS)
  local s = rshape_small()
  local x = roperand(s)
  local y = roperand(rbshape(s))
  if chance(0.5) then x, y = y, x end
  local f = dl[name]
  local r1 = f(x, y)
  if EXACT[name] and dl.is_array(r1) and r1.size <= 512 and dl.is_array(x) and dl.is_array(y) then
    -- layout oracle: same op on contiguous copies
    local okc, xc = pcall(x.copy, x)
    local okd, yc = pcall(y.copy, y)
    if okc and okd then
      local ok2, r2 = pcall(f, xc, yc)
      if ok2 then same_result(r2, r1, "LAYOUT " .. name) end
    end
  end
  local o = rout(x, y)
  if o ~= nil then
    local before = dl.is_array(r1) and r1
    local ok, r = pcall(f, x, y, { out = o })
    if ok and before and rawequal(r, o) and dl.is_array(o) and o.dtype == before.dtype and EXACT[name] then
      same_result(before, o, "OUT-ALIAS " .. name)
    elseif not ok and not dl.is_error(r) then error(r, 0) end
  end
  return r1
end)

op(6, "unop", function()
  local name = pick(UN_OPS)
  local s = rshape_small()
  local x = roperand(s)
  local f = dl[name]
  local r1 = f(x)
  if EXACT[name] and dl.is_array(r1) and dl.is_array(x) and r1.size <= 512 then
    local okc, xc = pcall(x.copy, x)
    if okc then local ok2, r2 = pcall(f, xc) if ok2 then same_result(r2, r1, "LAYOUT " .. name) end end
  end
  local o = rout(x, nil)
  if o ~= nil then
    local ok, r = pcall(f, x, { out = o })
    if ok and dl.is_array(r1) and rawequal(r, o) and dl.is_array(o) and o.dtype == r1.dtype and EXACT[name] then
      same_result(r1, o, "OUT-ALIAS " .. name)
    elseif not ok and not dl.is_error(r) then error(r, 0) end
  end
  if chance(0.3) and dl.is_array(x) then return x[name](x) end
  return r1
end)

op(4, "operator", function()
  local s = rshape_small()
  local x, y = roperand(s), roperand(rbshape(s))
  local o = pick(OPERATORS)
  if (not dl.is_array(x) and not dl.is_array(y)) or ((o == "unm" or o == "bnot") and not dl.is_array(x)) then x = rvalues(s, pick(dtypes)) end
  if o == "+" then return x + y elseif o == "-" then return x - y elseif o == "*" then return x * y
  elseif o == "/" then return x / y elseif o == "//" then return x // y elseif o == "%" then return x % y
  elseif o == "^" then return x ^ y elseif o == "&" then return x & y elseif o == "|" then return x | y
  elseif o == "~" then return x ~ y elseif o == "<<" then return x << y elseif o == ">>" then return x >> y
  elseif o == "unm" then return -x elseif o == "bnot" then return ~x elseif o == "<" then return x < y end
  return x <= y
end)

op(3, "where", function()
  local s = rshape_small()
  local c = chance(0.7) and rlayout(rvalues(rbshape(s), pick { "bool", "bool", "int8", "float32" })) or roperand(s)
  local x, y = roperand(s), roperand(rbshape(s))
  local r1 = dl.where(c, x, y)
  local o = rout(x, y)
  if o ~= nil then
    local ok, r = pcall(dl.where, c, x, y, { out = o })
    if ok and dl.is_array(r1) and rawequal(r, o) and dl.is_array(o) and o.dtype == r1.dtype then same_result(r1, o, "OUT-ALIAS where") end
    if not ok and not dl.is_error(r) then error(r, 0) end
  end
  return r1
end)

op(2, "clip", function()
  local s = rshape_small()
  local x = roperand(s)
  local lo = chance(0.2) and nil or roperand(rbshape(s))
  local hi = chance(0.2) and nil or roperand(rbshape(s))
  local r1 = dl.clip(x, lo, hi)
  local o = rout(x, lo)
  if o ~= nil then local ok, r = pcall(dl.clip, x, lo, hi, { out = o }) if not ok and not dl.is_error(r) then error(r, 0) end end
  return r1
end)

local function rdims(nd)
  local k = R(1, 9)
  if k == 1 then return nil end
  if k == 2 then return R(-nd - 1, nd + 1) end
  if k == 3 then return {} end
  if k == 4 then local t = {} for i = 1, nd do if chance(0.5) then t[#t + 1] = chance(0.3) and -i or i end end return t end
  if k == 5 then return { 1, 1 } end
  if k == 6 then return pick { 0, 33, -33, math.maxinteger, math.mininteger, 1.5, 0 / 0, "1", { "x" }, 2 ^ 63 } end
  if k == 7 then return { 1, -1 } end
  return R(1, math.max(nd, 1))
end

op(8, "reduce", function()
  local name = pick(RED_OPS)
  local plain = name:match("^nan(.+)$") or name -- a nan-function takes its reduction's options
  local s = rshape_small()
  local a = chance(0.85) and rlayout(rvalues(s, pick(dtypes))) or ranything()
  local opts
  local k = R(1, 6)
  if k == 1 then opts = nil
  elseif k == 2 then opts = rdims(#s)
  else
    opts = { dim = rdims(#s) }
    if chance(0.4) then opts.keepdims = chance(0.9) and chance(0.5) or pick { 1, "yes" } end
    if chance(0.25) and (plain == "sum" or plain == "prod" or plain == "mean" or plain == "std" or plain == "var" or chance(0.1)) then opts.dtype = rdtype() end
    if chance(0.3) and (plain == "std" or plain == "var" or chance(0.05)) then opts.ddof = pick { 0, 1, 2, -1, 1.5, math.maxinteger, 0 / 0, 1 / 0, 100 } end
    if chance(0.2) then opts.out = rout(a, nil) end
    if chance(0.05) then opts.bogus = 1 end
  end
  local f = dl[name]
  local r1 = f(a, opts)
  -- layout oracle: integers/bool (and order-independent ops) must not depend on layout
  if dl.is_array(a) and (INT_DT[a.dtype] or plain == "min" or plain == "max" or plain == "argmin" or plain == "argmax"
      or name == "all" or name == "any" or name == "count_nonzero") and not (type(opts) == "table" and opts.out) then
    if not (type(opts) == "table" and opts.dtype and not INT_DT[opts.dtype]) and plain ~= "mean" and plain ~= "std" and plain ~= "var" then
      local okc, ac = pcall(a.copy, a)
      if okc then local ok2, r2 = pcall(f, ac, opts) if ok2 then same_result(r2, r1, "LAYOUT " .. name) end end
    end
  end
  if chance(0.3) and dl.is_array(a) then return a[name](a, opts) end
  return r1
end)

op(4, "matmul", function()
  local m, kk, n = R(0, 5), R(0, 5), R(0, 5)
  local sa, sb
  local k = R(1, 7)
  if k == 1 then sa, sb = { kk }, { kk }
  elseif k == 2 then sa, sb = { m, kk }, { kk }
  elseif k == 3 then sa, sb = { kk }, { kk, n }
  elseif k == 4 then local b = R(1, 3) sa, sb = { b, m, kk }, { chance(0.5) and 1 or b, kk, n }
  elseif k == 5 then sa, sb = { m, kk }, { kk + R(-1, 1), n }
  elseif k == 6 then sa, sb = rshape_small(), rshape_small()
  else sa, sb = { m, kk }, { kk, n } end
  local da, db = pick(dtypes), chance(0.6) and nil or pick(dtypes)
  local a = rlayout(rvalues(sa, da))
  local b = rlayout(rvalues(sb, db or da))
  if chance(0.05) then a = ranything() end
  local opts
  if chance(0.3) then opts = { dtype = chance(0.5) and rdtype() or nil, out = rout(a, b) } end
  local which = chance(0.8) and "matmul" or "dot"
  local r1
  if which == "dot" then r1 = dl.dot(a, b) else r1 = dl.matmul(a, b, opts) end
  if dl.is_array(r1) and INT_DT[r1.dtype] and dl.is_array(a) and dl.is_array(b) and not (opts and opts.out) then
    local ok2, r2 = pcall(dl[which], a:copy(), b:copy(), which == "matmul" and opts or nil)
    if ok2 then same_result(r2, r1, "LAYOUT " .. which) end
  end
  if which == "matmul" and dl.is_array(r1) and chance(0.4) and dl.is_array(a) and #sa == 2 and #sb == 2 and sa[1] == sa[2] and sa[2] == sb[1] and sb[1] == sb[2] and a.dtype == r1.dtype then
    -- out aliasing an operand must give the same as a fresh product (as documented)
    local ac = a:copy()
    local fresh = dl.matmul(ac, b)
    local ok, r = pcall(dl.matmul, ac, b, { out = ac })
    if ok then same_result(fresh:astype(ac.dtype), ac, "OUT-ALIAS matmul") end
  end
  return r1
end)

-- dl.linalg with hostile operands (any dtype, NaN/inf/extremes, singular and
-- empty matrices, odd shapes and layouts, bad options): results or coded
-- errors, never a crash; a result must not depend on the operands' layout.
local LINALG_FNS = { "solve", "inv", "det", "slogdet", "cholesky", "eigh", "svd", "qr", "lstsq" }
local LINALG_OPTS = { eigh = { UPLO = { "L", "U", "X", 1 } }, qr = { mode = { "reduced", "complete", "r", "raw" } },
  svd = { full_matrices = { true, false, 1 }, compute_uv = { true, false } }, lstsq = { rcond = { -1, 0, 1e-3, 0 / 0, "x" } } }
op(4, "linalg", function()
  local name = pick(LINALG_FNS)
  local f = dl.linalg[name]
  local n, m = R(0, 5), R(0, 5)
  local sa = chance(0.7) and { n, chance(0.7) and n or m } or rshape_small()
  if chance(0.3) then table.insert(sa, 1, R(0, 3)) end
  local a = rlayout(rvalues(sa, pick(dtypes)))
  if chance(0.05) then a = ranything() end
  local b
  if name == "solve" or name == "lstsq" then
    local sb = chance(0.5) and { sa[#sa - 1] or n } or { sa[#sa - 1] or n, R(0, 3) }
    if chance(0.2) then sb = rshape_small() end
    b = rlayout(rvalues(sb, pick(dtypes)))
    if chance(0.05) then b = ranything() end
  end
  local opts
  if LINALG_OPTS[name] and chance(0.5) then
    opts = {}
    for k, vals in pairs(LINALG_OPTS[name]) do if chance(0.6) then opts[k] = pick(vals) end end
    if chance(0.05) then opts.bogus = 1 end
  elseif chance(0.03) then opts = ranything() end
  -- (functions without options take no nil either: an extra argument is ARGUMENT)
  local function call(x, y)
    local args = { x }
    if b ~= nil then args[2] = y end
    if opts ~= nil then args[#args + 1] = opts end
    return f(table.unpack(args, 1, #args))
  end
  local r1 = table.pack(call(a, b))
  if dl.is_array(a) and (b == nil or dl.is_array(b)) and dl.is_array(r1[1]) then
    -- the same numbers in contiguous memory give the same results (same LAPACK calls)
    local ok2, r2 = pcall(call, a:copy(), b ~= nil and b:copy() or nil)
    if ok2 and dl.is_array(r2) then same_result(r2, r1[1], "LAYOUT linalg." .. name) end
  end
  return r1[1]
end)

-- Order statistics with hostile operands (any dtype, NaN/inf/extremes, empty
-- and 0-d arrays, odd layouts), q values (out of range, NaN, arrays of any
-- dtype, nested tables) and options: results or coded errors, never a crash;
-- a result depends only on the values, never on the layout.
local ORDER_FNS = { "median", "nanmedian", "quantile", "nanquantile", "percentile", "nanpercentile" }
local ORDER_METHODS = { "linear", "lower", "higher", "nearest", "midpoint", "weibull", "", 1 }
op(4, "order statistics", function()
  local name = pick(ORDER_FNS)
  local s = rshape_small()
  local a = chance(0.9) and rlayout(rvalues(s, pick(dtypes))) or ranything()
  local median = name == "median" or name == "nanmedian"
  local top = (name == "percentile" or name == "nanpercentile") and 100 or 1
  local q
  local k = R(1, 7)
  if k == 1 then q = R(0, 4) * top / 4
  elseif k == 2 then q = { top * math.random(), 0, top }
  elseif k == 3 then q = rvalues({ R(0, 3), R(1, 2) }, pick(dtypes))
  elseif k == 4 then q = pick { -1, top * 1.5, 0 / 0, 1 / 0, -1 / 0, "0.5", true, {}, { { 0.5 } }, { 0.5, "x" } }
  elseif k == 5 then q = ranything()
  else q = math.random() * top end
  local opts
  local j = R(1, 5)
  if j == 2 then opts = rdims(#s)
  elseif j >= 3 then
    opts = { dim = rdims(#s) }
    if chance(0.4) then opts.keepdims = chance(0.9) and chance(0.5) or pick { 1, "yes" } end
    if not median and chance(0.6) then opts.method = pick(ORDER_METHODS) end
    if chance(0.05) then opts.bogus = 1 end
  end
  local f = dl[name]
  local function call(x)
    if median then return f(x, opts) end
    return f(x, q, opts)
  end
  local r1 = call(a)
  if dl.is_array(a) then
    local okc, ac = pcall(a.copy, a)
    if okc then
      local ok2, r2 = pcall(call, ac)
      if ok2 then same_result(r2, r1, "LAYOUT " .. name) end
    end
  end
  return r1
end)

-- dl.scatter_add/_mul/_max/_min with hostile operands (any dtype, layout,
-- read-only and broadcast targets, indices out of range, huge, negative, of
-- float or bool dtype, values that alias the target or do not broadcast,
-- bad options): the target updated or a coded error, never a crash; the
-- updates must not depend on the target's layout.
local SCATTER_FNS = { "scatter_add", "scatter_mul", "scatter_max", "scatter_min" }
op(4, "scatter", function()
  local f = dl[pick(SCATTER_FNS)]
  local st = rshape_small()
  if #st == 0 and chance(0.8) then st = { R(0, 5) } end
  local target = rlayout(rvalues(st, pick(dtypes)))
  if chance(0.05) and target.ndim > 0 then target = target:expand(target.shape) end
  if chance(0.03) then target = ranything() end
  local dim = dl.is_array(target) and target.ndim > 0 and R(1, target.ndim) or 1
  local n = dl.is_array(target) and target.ndim > 0 and target.shape[dim] or 0
  local ni = chance(0.1) and {} or { R(0, 6) }
  if chance(0.15) then ni = { R(1, 3), R(1, 3) } end
  local idx
  local k = R(1, 10)
  if k <= 6 then
    local t = {}
    for i = 1, prod(ni) do t[i] = n > 0 and R(-n, n) or R(-2, 2) end
    for i = 1, #t do if t[i] == 0 then t[i] = 1 end end
    if #t > 0 and chance(0.1) then t[R(#t)] = pick { n + 1, -n - 1, 0, math.maxinteger, math.mininteger } end
    idx = dl.array(#t > 0 and t or dl.zeros({ 0 }, { dtype = "int64" }), { dtype = "int64" }):reshape(#ni > 0 and ni or {})
    local it = pick { "int64", "int32", "int8", "uint8", "uint64", "int64" }
    local ok, c = pcall(idx.astype, idx, it)
    if ok then idx = c end
  elseif k == 7 then idx = rvalues(ni, pick(dtypes))
  elseif k == 8 and dl.is_array(target) and target.ndim == 1 and target.dtype ~= "bool" then
    idx = target -- indices that alias the target
  elseif k == 9 then idx = { 1, -1, 1 }
  else idx = ranything() end
  local values
  local v = R(1, 8)
  if v <= 3 and dl.is_array(target) and dl.is_array(idx) then
    local ok, sample = pcall(dl.take, target, idx, dim)
    local shape = ok and sample.shape or rshape_small()
    if chance(0.3) and #shape > 0 then table.remove(shape, 1) end
    values = rlayout(rvalues(shape, chance(0.7) and target.dtype or pick(dtypes)))
  elseif v == 4 then values = pick(hostile_vals)
  elseif v == 5 and dl.is_array(target) then values = target -- values that alias the target
  elseif v == 6 then values = rvalues(rshape_small(), pick(dtypes))
  else values = ranything() end
  local opts
  if chance(0.4) then opts = { dim = dim }
  elseif chance(0.05) then opts = pick { { dim = 0 }, { dim = 9 }, { dim = "x" }, { bogus = 1 }, 3 }
  elseif chance(0.03) then opts = ranything() end
  local plain_target = dl.is_array(target) and target.size > 0 and not target.readonly and idx ~= target and values ~= target
  local copy = plain_target and target:copy() or nil
  local r1 = f(target, idx, values, opts)
  if copy ~= nil and r1 == target then
    -- the same updates on a contiguous copy give the same elements
    local ok2, r2 = pcall(f, copy, idx, values, opts)
    if ok2 then same_result(r2, r1, "LAYOUT scatter") end
  end
  return r1
end)

-- Sets and keys (dl.isin, dl.lexsort, dl.unique's options) with hostile
-- operands (any dtypes, mixed; NaN/inf; empty and 0-d; odd key lists and
-- options): results or coded errors; a result must not depend on layout.
local function rset_operand(s)
  local k = R(1, 12)
  if k == 1 then return ranything() end
  if k == 2 then return pick { 1, 0 / 0, true, {}, { 1, 0 / 0, -1 / 0 }, { { 1 }, { 2 } }, "x" } end
  if k == 3 then local d, v = rdeadish(s) return pick { d, v } end
  return rlayout(rvalues(s, pick(dtypes)))
end
local function copies(x)
  if dl.is_array(x) then return x:copy() end
  if type(x) ~= "table" then return x end
  local t = {}
  for i = 1, #x do t[i] = dl.is_array(x[i]) and x[i]:copy() or x[i] end
  return t
end
op(4, "sets", function()
  local s = rshape_small()
  local k = R(1, 3)
  local f, args
  if k == 1 then
    local opts = chance(0.5) and { invert = pick { true, false, 1, "no" } } or nil
    if chance(0.05) then opts = pick { { bogus = 1 }, 5, "x" } end
    f, args = dl.isin, { rset_operand(s), rset_operand(chance(0.5) and rshape_small() or { R(0, 200) }) }
    if opts ~= nil then args[3] = opts end
  elseif k == 2 then
    local keys = {}
    local shape = chance(0.8) and s or nil
    for i = 1, R(0, 4) do keys[i] = rset_operand(shape or rshape_small()) end
    if chance(0.1) then keys = pick { rset_operand(s), {}, { 1, 2, 3 }, { keys[1], nil, keys[1] }, { x = 1 } } end
    f, args = dl.lexsort, { keys }
  else
    local opts = {}
    for _, key in ipairs { "return_index", "return_inverse", "return_counts", "equal_nan" } do
      if chance(0.5) then opts[key] = chance(0.9) and chance(0.5) or pick { 1, "yes" } end
    end
    if chance(0.05) then opts.bogus = 1 end
    f, args = dl.unique, { rset_operand(s), opts }
  end
  local r1 = table.pack(f(table.unpack(args, 1, #args)))
  if dl.is_array(r1[1]) then
    local ok2, r2 = pcall(function()
      local c = {}
      for i = 1, #args do c[i] = args[i] end
      c[1] = copies(args[1]) -- (the operands; options stay as they are)
      if k == 1 then c[2] = copies(args[2]) end
      return table.pack(f(table.unpack(c, 1, #c)))
    end)
    if ok2 then
      for i = 1, r1.n do
        if dl.is_array(r1[i]) and dl.is_array(r2[i]) then same_result(r2[i], r1[i], "LAYOUT sets " .. k) end
      end
    end
  end
  return r1[1]
end)

-- dl.cross, dl.outer, dl.norm, dl.einsum and dl.interp with hostile operands
-- (any dtype, NaN/inf/extremes, empty and 0-d, odd layouts), random and broken
-- subscripts and options: results or coded errors, never a crash. cross, outer
-- and interp compute element by element: a contiguous copy of the operands
-- gives the same bits.
local EINSUM_SUBS = { "ij,jk->ik", "bij,bjk->bik", "i,i->", "ij->ji", "ij->", "ii->i", "bi,bi->b", "ij,jk",
  "ii", "i,j->ij", "ij,ij,ij->", "", "->", ",", "i,", "ij->ii", "i->j", "...", "i1", "ab,bc->ca", "aaa->a",
  "Ab,bA", "i j , j k -> i k", string.rep("a", 40), "ij,jk,kl,lm->im", "...ij,...jk->...ik", "...i->i",
  "i...", "..i", "......", "...,...", "a...b,b...->...", "...->" }
local NORM_ORDS = { 1, -1, 2, -2, 0, 3, 0.5, -0.5, math.huge, -math.huge, 0 / 0, 1e300, "fro", "nuc", "f", "max", true }
local function rsubscripts()
  if chance(0.5) then return pick(EINSUM_SUBS) end
  local letters, t = "abcdAZ", {}
  for _ = 1, R(0, 12) do
    local c = R(1, 10)
    t[#t + 1] = c <= 6 and letters:sub(c, c) or pick { ",", "->", "-", " ", ".", "..." }
  end
  return table.concat(t)
end
op(4, "vecmath", function()
  local which = R(1, 5)
  local function operand(s) local a = rlayout(rvalues(s, pick(dtypes))) if chance(0.04) then a = ranything() end return a end
  if which == 1 or which == 2 then
    local lead = rshape_small()
    local sa, sb = {}, {}
    for i = 1, #lead do sa[i], sb[i] = lead[i], chance(0.2) and 1 or lead[i] end
    sa[#sa + 1], sb[#sb + 1] = pick { 2, 3, 3, 1, 4, 0 }, pick { 2, 3, 3, 4 }
    if chance(0.1) then sa = rshape_small() end
    local a, b = operand(sa), operand(sb)
    local f = which == 1 and dl.cross or dl.outer
    local r1 = f(a, b)
    if dl.is_array(a) and dl.is_array(b) and dl.is_array(r1) then
      local ok2, r2 = pcall(f, a:copy(), b:copy())
      if ok2 then same_result(r2, r1, which == 1 and "LAYOUT cross" or "LAYOUT outer") end
    end
    return r1
  elseif which == 3 then
    local a = operand(rshape_small())
    local opts
    if chance(0.8) then
      opts = {}
      if chance(0.7) then opts.ord = pick(NORM_ORDS) end
      if chance(0.6) then
        local nd = dl.is_array(a) and a.ndim or 2
        opts.dim = chance(0.5) and rdims(nd) or { R(-nd - 1, nd + 1), R(-nd - 1, nd + 1) }
        if chance(0.1) then opts.dim = { 1, 2, 3 } end
      end
      if chance(0.3) then opts.keepdims = pick { true, false, 1 } end
      if chance(0.05) then opts.bogus = 1 end
    end
    return dl.norm(a, opts)
  elseif which == 4 then
    local n = R(1, 4)
    local ops = {}
    for k = 1, n do ops[k] = operand(chance(0.7) and { R(0, 3), R(0, 3) } or rshape_small()) end
    if chance(0.03) then n = R(30, 40) for k = 1, n do ops[k] = ops[k] or dl.ones(1) end end
    local sub = chance(0.03) and ranything() or rsubscripts()
    return dl.einsum(sub, table.unpack(ops, 1, n))
  end
  local m = R(0, 6)
  local x = operand(rshape_small())
  local xp = operand(chance(0.9) and { m } or rshape_small())
  local fp = operand(chance(0.9) and { m } or rshape_small())
  local opts
  if chance(0.5) then
    opts = {}
    for _, key in ipairs { "left", "right", "period" } do
      if chance(0.4) then opts[key] = pick { 0, -1, 2.5, 0 / 0, math.huge, -math.huge, 1e308, "x" } end
    end
  end
  local r1 = dl.interp(x, xp, fp, opts)
  if dl.is_array(x) and dl.is_array(xp) and dl.is_array(fp) and dl.is_array(r1) then
    local ok2, r2 = pcall(dl.interp, x:copy(), xp:copy(), fp:copy(), opts)
    if ok2 then same_result(r2, r1, "LAYOUT interp") end
  end
  return r1
end)

op(3, "concat/stack", function()
  local base = rshape_small()
  if #base == 0 then base = { R(0, 3) } end
  local list = {}
  local dt = pick(dtypes)
  local n = chance(0.05) and R(100, 300) or R(1, 5)
  local axis = R(1, #base)
  for i = 1, n do
    local s = {}
    for j = 1, #base do s[j] = base[j] end
    if chance(0.6) then s[axis] = R(0, 3) end
    if chance(0.05) then s = rshape_small() end
    list[i] = rlayout(rvalues(s, chance(0.8) and dt or pick(dtypes)))
  end
  if chance(0.05) then list[R(#list)] = ranything() end
  if chance(0.05) then local d, v = rdeadish(base) list[R(#list)] = pick { d, v } end
  if chance(0.03) then list = pick { {}, 5, setmetatable({}, { __len = function() return 3 end }), { list[1], nil, list[1] } } end
  local dim = chance(0.7) and axis or rdims(#base)
  local f = chance(0.6) and dl.concat or dl.stack
  local r1 = f(list, dim)
  if dl.is_array(r1) and r1.size <= 2048 and type(list) == "table" then
    local copies = {}
    for i = 1, #list do if dl.is_array(list[i]) then copies[i] = list[i]:copy() end end
    if #copies == #list then local ok2, r2 = pcall(f, copies, dim) if ok2 then same_result(r2, r1, "LAYOUT concat/stack") end end
  end
  return r1
end)

op(2, "compute on deleted", function()
  local s = rshape_small()
  local d, v = rdeadish(s)
  local name = pick { "add", "mul", "sum", "matmul", "where", "concat", "abs", "max" }
  local ok, e
  if name == "sum" or name == "max" or name == "abs" then ok, e = pcall(dl[name], d)
  elseif name == "where" then ok, e = pcall(dl.where, d, 1, 2)
  elseif name == "concat" then ok, e = pcall(dl.concat, { d, v })
  else ok, e = pcall(dl[name], d, v) end
  if ok then oracle[#oracle + 1] = "compute " .. name .. " on a deleted array succeeded"
  elseif not dl.is_error(e) then plain[#plain + 1] = "deleted compute " .. name .. " :: " .. tostring(e)
  elseif e.code ~= "DELETED" and e.code ~= "SHAPE" and e.code ~= "DTYPE" then oracle[#oracle + 1] = "compute " .. name .. " on deleted raised " .. e.code .. " (" .. e.message .. ")" end
  -- the view must still work
  return dl.abs(v)
end)

-- files
local TMPDIR = os.getenv("FUZZ_TMP") or "work"
local function mutate(s)
  if #s == 0 then return string.char(R(0, 255)) end
  local k = R(1, 8)
  if k == 1 then return s:sub(1, R(0, #s)) end
  if k == 2 then return s .. string.rep(string.char(R(0, 255)), R(1, 64)) end
  if k == 3 then
    local t = { s:byte(1, -1) }
    for _ = 1, R(1, 8) do t[R(#t)] = R(0, 255) end
    local parts = {} for i = 1, #t, 4096 do parts[#parts + 1] = string.char(table.unpack(t, i, math.min(#t, i + 4095))) end
    return table.concat(parts)
  end
  if k == 4 then
    -- numbers in the header
    return (s:gsub("%d+", function(d) if chance(0.3) then return pick { "0", "-1", "99999999999999999999", "18446744073709551615", "9223372036854775807", "4294967296", "1e9", "" } end end, 6))
  end
  if k == 5 then local t = {} for i = 1, R(0, 300) do t[i] = string.char(R(0, 255)) end return table.concat(t) end
  if k == 6 then return (s:gsub("'[<|>][a-zA-Z]%d+'", pick { "'<U8'", "'|O'", "'>f8'", "'<c32'", "'<f16'", "'|b1'", "'<V4'", "'<M8[s]'" }, 1)) end
  if k == 7 then return (s:gsub('"dtype":"[A-Z0-9]+"', pick { '"dtype":"F64"', '"dtype":"BOGUS"', '"dtype":"I4"', '"dtype":"BOOL"', '"dtype":"F8_E4M3"' }, 1)) end
  return (s:gsub('%[(%d+),(%d+)%]', function(a, b) return "[" .. pick { "0", a, "-5", "18446744073709551615" } .. "," .. pick { b, "99999999999" } .. "]" end, 1))
end

-- Generator draws with hostile parameters, shapes and choice's options. beta's
-- a and b are never both tiny: Johnk's loop then rejects forever (NumPy's too)
-- and only a host's interrupt, which this driver does not raise, ends it.
local function rparam()
  if chance(0.6) then return R(0, 40) / pick { 1, 4, 10 } end
  return pick(weird_numbers)
end
local function rchoice_opts()
  if chance(0.2) then return nil end
  local o = {}
  if chance(0.5) then o.replace = pick { true, false, false, 1, "no" } end
  if chance(0.3) then o.shuffle = pick { true, false, 0 } end
  if chance(0.5) then
    o.p = pick { { 0.5, 0.5 }, { 1, 0, 0 }, { 0.2, 0.3, 0.5 }, { 0 / 0, 1 }, { -1, 2 }, {},
      { 0.25, 0.25, 0.25, 0.25 }, "p", rarray(), rdeadish({ 3 }) }
  end
  if chance(0.05) then o.bogus = 1 end
  return o
end
op(5, "Generator draws", function()
  local rng = dl.random.default_rng(R(0, 1000))
  local shape = chance(0.3) and nil or rshape(true)
  local k = R(1, 7)
  if k == 1 then return rng:exponential(rparam(), shape) end
  if k == 2 then return rng:poisson(rparam(), shape) end
  if k == 3 then return rng:binomial(chance(0.8) and rint() or rparam(), rparam() / 40, shape) end
  if k == 4 then return rng:gamma(rparam(), rparam(), shape) end
  if k == 5 then
    local a, b = rparam(), rparam()
    if not (a >= 1e-3 or b >= 1e-3) then a = 0.5 end
    return rng:beta(a, b, shape)
  end
  local a = chance(0.6) and (chance(0.8) and R(-2, 12) or pick(weird_numbers)) or rarray()
  return rng:choice(a, chance(0.4) and nil or rshape(true), rchoice_opts(), chance(0.03) and 1 or nil)
end)

op(4, "files", function()
  local a = rlayout(rvalues(rshape_small(), pick(dtypes)))
  local k = R(1, 8)
  if k == 1 then return dl.fromnpy(mutate(dl.tonpy(a)), chance(0.5) and nil or pick { { copy = true }, { copy = false }, { device = pick(devices) } })
  elseif k == 2 then
    local t = { w = a }
    if chance(0.5) then t.v = rvalues(rshape_small(), pick(dtypes)) end
    return dl.fromsafetensors(mutate(dl.tosafetensors(t, chance(0.3) and { k = "v" } or nil)), chance(0.5) and nil or { copy = chance(0.5) })
  elseif k == 3 or k == 4 then
    local path = TMPDIR .. "/fz" .. seed .. "_" .. R(1, 3) .. (k == 3 and ".npy" or ".st")
    if k == 3 then dl.save(path, a) else dl.save_safetensors(path, { x = a }) end
    if chance(0.5) then
      local fh = io.open(path, "rb") local s = fh:read("a") fh:close()
      local w = io.open(path .. ".m", "wb") w:write(mutate(s)) w:close()
      path = path .. ".m"
    end
    local r = k == 3 and dl.load(path, chance(0.5) and { copy = chance(0.5) } or nil) or dl.load_safetensors(path, chance(0.5) and { copy = chance(0.5) } or nil)
    if k == 3 and dl.is_array(r) and not path:find("%.m$") then same_result(a:contiguous(), r, "NPY round trip") end
    return r
  elseif k == 5 then
    return dl.load(pick { TMPDIR, "/proc/self/maps", "/proc/self/status", "/dev/null", "/dev/zero", "/nonexistent/x", "", "/", TMPDIR .. "/../work/../work" })
  elseif k == 6 then
    return dl.load_safetensors(pick { TMPDIR, "/proc/self/maps", "/dev/null", "/dev/zero", "/nonexistent", "" })
  elseif k == 7 then
    return dl.save(pick { TMPDIR, "/proc/self/maps", "/dev/null", "/nonexistent/dir/x.npy", "" }, a)
  end
  -- safetensors round trip oracle
  local t = { a = a }
  local r = dl.fromsafetensors(dl.tosafetensors(t))
  if type(r) == "table" and dl.is_array(r.a) then same_result(a:contiguous(), r.a, "ST round trip") end
  return r
end)

-- Oracles on a live array (small): round trips through copy/contiguous/frombytes must agree.
local function check_oracles(a)
  local ok, bytes = pcall(a.tobytes, a)
  if not ok then return end
  local okc, c = pcall(a.copy, a)
  if okc and dl.is_array(c) then
    local okb, b2 = pcall(c.tobytes, c)
    if okb and b2 ~= bytes then oracle[#oracle + 1] = "copy():tobytes() differs from tobytes() dtype=" .. a.dtype end
    if okb then
      local okf, f = pcall(dl.frombytes, bytes, a.dtype, a.shape)
      if okf then
        local b3 = f:tobytes()
        if b3 ~= bytes then oracle[#oracle + 1] = "frombytes round trip differs dtype=" .. a.dtype end
      elseif not (dl.is_error(f)) then
        plain[#plain + 1] = "frombytes(oracle) :: " .. tostring(f)
      elseif a.size > 0 and a.dtype ~= "bool" then
        oracle[#oracle + 1] = "frombytes of own bytes failed: " .. tostring(f) .. " dtype=" .. a.dtype
      end
    end
  end
  -- element reads agree for 1-D arrays
  if a.ndim == 1 and a.size <= 64 then
    local okt, t = pcall(a.totable, a)
    if okt then
      for i = 1, a.size do
        local x, y = a[i], t[i]
        local same = x == y or (x ~= x and y ~= y) or (type(x) == "table" and type(y) == "table" and
          ((x.re == y.re) or (x.re ~= x.re and y.re ~= y.re)) and ((x.im == y.im) or (x.im ~= x.im and y.im ~= y.im)))
        if not same then oracle[#oracle + 1] = ("a[%d] ~= totable()[%d] (%s vs %s) dtype=%s"):format(i, i, tostring(x), tostring(y), a.dtype) break end
      end
    end
  end
end

-- GC mode variety (seeded): aggressive incremental GC makes finalizers run inside allocations.
local mode = seed % 4
if mode == 1 then collectgarbage("incremental", 10, 400, 0)
elseif mode == 2 then collectgarbage("generational", 5, 10)
elseif mode == 3 then collectgarbage("incremental", 0, 1000, 0) end

local deleted_ops = {}
local function run_one(i)
  local o = pick(ops)
  local name, f = o[1], o[2]
  local before_deleted
  if TRACE then io.stderr:write(("[%d] %s\n"):format(i, name)) end
  local res = table.pack(pcall(f))
  OPSTAT = OPSTAT or {}
  local st = OPSTAT[name] or { 0, 0, {} } OPSTAT[name] = st
  if res[1] then st[1] = st[1] + 1 else st[2] = st[2] + 1 if dl.is_error(res[2]) then st[3][res[2].code] = (st[3][res[2].code] or 0) + 1 end end
  if res[1] then
    counts.ok = counts.ok + 1
    for k = 2, res.n do
      local v = res[k]
      if dl.is_array(v) then add(v) elseif type(v) == "userdata" and v ~= io.stdout then addcap(v) end
    end
  else
    local e = res[2]
    if e == PROXY_ERROR then
      counts.coded = counts.coded + 1
      codes.PROXY_ERROR = (codes.PROXY_ERROR or 0) + 1
    elseif dl.is_error(e) then
      counts.coded = counts.coded + 1
      codes[e.code] = (codes[e.code] or 0) + 1
      if type(e.code) ~= "string" or type(e.message) ~= "string" or type(e.op) ~= "string" then
        oracle[#oracle + 1] = "malformed error object from " .. name
      end
    else
      counts.plain = counts.plain + 1
      local msg = type(e) == "string" and e or ("<" .. type(e) .. "> " .. tostring(e))
      plain[#plain + 1] = name .. " :: " .. msg
    end
  end
end

local coros = {}
for i = 1, ITERS do
  if chance(0.03) then
    -- run a few ops inside a coroutine, yielding between them; sometimes abandon it
    local co = coroutine.create(function()
      for j = 1, R(1, 5) do run_one(i) coroutine.yield() end
    end)
    coroutine.resume(co)
    if chance(0.5) then coros[#coros + 1] = co else while coroutine.status(co) == "suspended" do coroutine.resume(co) end end
    if #coros > 10 then table.remove(coros, 1) end
  else
    run_one(i)
  end
  if chance(0.05) then
    local a = rarray()
    local ok, live = pcall(function() return a.size end)
    if ok and live <= 256 then
      local okk, err = pcall(check_oracles, a)
      if not okk and not dl.is_error(err) then plain[#plain + 1] = "oracle-harness :: " .. tostring(err) end
    end
  end
  -- deleted arrays must report DELETED for data/view methods
  if chance(0.02) then
    local a = next(deleted)
    if a then
      for _, m in ipairs { "copy", "totable", "tobytes", "contiguous", "to_dlpack", "get" } do
        local ok, e = pcall(a[m] or dl.zeros{1}[m], a)
        if ok then oracle[#oracle + 1] = "method " .. m .. " succeeded on a deleted array"
        elseif not dl.is_error(e) then plain[#plain + 1] = "deleted:" .. m .. " :: " .. tostring(e)
        elseif e.code ~= "DELETED" then oracle[#oracle + 1] = ("deleted array: %s raised %s (%s)"):format(m, e.code, e.message) end
      end
    end
  end
end

-- Report (deduplicated).
local function dedupe(t)
  local seen, out = {}, {}
  for _, s in ipairs(t) do
    local key = s:gsub("0x%x+", "0x?"):gsub("%d+", "N")
    if not seen[key] then seen[key] = true out[#out + 1] = s end
  end
  return out
end
for _, s in ipairs(dedupe(plain)) do print("PLAIN seed=" .. seed .. " " .. s) end
for _, s in ipairs(dedupe(oracle)) do print("ORACLE seed=" .. seed .. " " .. s) end
local cs = {}
for k, v in pairs(codes) do cs[#cs + 1] = k .. "=" .. v end
table.sort(cs)
print(("SUMMARY seed=%d iters=%d ok=%d coded=%d plain=%d codes: %s"):format(seed, ITERS, counts.ok, counts.coded, counts.plain, table.concat(cs, " ")))
if os.getenv("OPSTAT") then for k, v in pairs(OPSTAT) do local c = {} for kk, vv in pairs(v[3]) do c[#c+1] = kk .. "=" .. vv end print("OPSTAT", k, "ok=" .. v[1], "err=" .. v[2], table.concat(c, " ")) end end
pool, caps, coros = nil, nil, nil
collectgarbage()
collectgarbage()
if os.getenv("FUZZ_STRICT") and #plain + #oracle > 0 then os.exit(1, true) end
