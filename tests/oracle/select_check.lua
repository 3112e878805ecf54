-- tests/oracle/select_check.lua: runs the cases tests/oracle/select_cases.py
-- writes (NumPy as the oracle of masks, take, sort/argsort/topk, unique
-- (with return_index and equal_nan), isin, lexsort, searchsorted,
-- cumsum/cumprod, diff, bincount and histogram) through
-- dlbridge and compares the results. Prints each mismatch, then
-- "N passed, M failed"; exits non-zero on any failure.
--
--   lua5.4 tests/oracle/select_check.lua [seed]
--
-- The seed defaults to a new one each run (printed, so a failure can be
-- rerun with it); ORACLE_SEED fixes it. ORACLE_CASE=<id> runs one case.
local dl = require "dlbridge"

local python = os.getenv("ORACLE_PYTHON") or "/usr/bin/python3"
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle"
local seed = arg[1] or os.getenv("ORACLE_SEED") or
  tostring((os.time() * 7919 + math.floor(os.clock() * 1e6)) % 1000000)
local only = os.getenv("ORACLE_CASE")
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
print("select oracle: seed " .. seed)

local function apply_layout(a, layout)
  if layout == "-" then return a end
  if layout == "T" then return a:transpose() end
  local name, d, k = layout:match("^(%a+)(%d)%.?(%d*)$")
  d, k = tonumber(d), tonumber(k)
  if name == "rev" then return a:slice(d, nil, nil, -1) end
  if name == "step" then return a:slice(d, nil, nil, k) end
  error("unknown layout " .. layout)
end

local function same_value(x, y, loose_zero)
  if type(x) == "table" then
    return same_value(x.re, y.re, loose_zero) and same_value(x.im, y.im, loose_zero)
  end
  if x ~= x then return y ~= y end
  if x == y then
    if loose_zero or math.type(x) ~= "float" or x ~= 0 then return true end
    return 1 / x == 1 / y -- the sign of a zero
  end
  return false
end

-- Whether got equals want: shape, dtype and every element (NaN equal to NaN;
-- -0 equal to +0 when loose_zero). Returns false and a reason otherwise.
local function equal(got, want, loose_zero)
  if got.dtype ~= want.dtype then return false, "dtype " .. got.dtype .. " vs " .. want.dtype end
  if #got.shape ~= #want.shape then return false, "ndim " .. #got.shape .. " vs " .. #want.shape end
  for d = 1, #got.shape do
    if got.shape[d] ~= want.shape[d] then
      return false, "extent " .. got.shape[d] .. " vs " .. want.shape[d] .. " along dim " .. d
    end
  end
  local g, w = dl.array(got):reshape{-1}:totable(), dl.array(want):reshape{-1}:totable()
  if type(g) ~= "table" then g, w = {g}, {w} end
  for i = 1, #w do
    if not same_value(g[i], w[i], loose_zero) then
      return false, string.format("element %d: %s vs %s", i, tostring(g[i]), tostring(w[i]))
    end
  end
  return true
end

local function params_of(text)
  local p = {}
  if text == "-" then return p end
  for k, v in text:gmatch("([%w_]+)=([^;]*)") do
    p[k] = v == "true" or (v ~= "false" and (math.tointeger(tonumber(v)) or tonumber(v) or v))
  end
  return p
end

local function load(id, name)
  local f = io.open(dir .. "/" .. id .. "_" .. name .. ".npy", "rb")
  if not f then return nil end
  f:close()
  return dl.load(dir .. "/" .. id .. "_" .. name .. ".npy")
end

-- Each op: run(x, case) -> results, and how to compare them.
local ops = {}

ops.sort = function(x, p, c)
  local opts = {dim = p.dim, descending = p.descending, stable = p.stable}
  local v, i = x:sort(opts), x:argsort(opts)
  if p.stable then
    return {equal(v, c.out1, false)}, {equal(i, c.out2)}
  end
  -- Without stable, ties may come in any order: the values must be NumPy's,
  -- and the indices must pick them.
  return {equal(v, c.out1, true)}, {equal(dl.take_along_dim(x, i, p.dim), c.out1, true)}
end

ops.topk = function(x, p, c)
  local v, i = dl.topk(x, p.k, {dim = p.dim, largest = p.largest})
  return {equal(v, c.out1, true)}, {equal(i, c.out2)}
end

ops.unique = function(x, _, c)
  local u, inv, cnt = dl.unique(x, {return_inverse = true, return_counts = true})
  return {equal(u, c.out1, true)}, {equal(inv, c.out2)}, {equal(cnt, c.out3)}
end

ops.unique_index = function(x, p, c)
  local u, first, inv, cnt = dl.unique(x, {return_index = true, return_inverse = true,
                                           return_counts = true, equal_nan = p.equal_nan})
  return {equal(u, c.out1, true)}, {equal(first, c.out2)}, {equal(inv, c.out3)},
         {equal(cnt, c.out4)}
end

ops.isin = function(x, p, c) return {equal(dl.isin(x, c.val, {invert = p.invert}), c.out1)} end

ops.lexsort = function(_, p, c, layout)
  local keys = {}
  for k = 1, p.keys do keys[k] = apply_layout(c["k" .. k], layout) end
  return {equal(dl.lexsort(keys), c.out1)}
end

ops.lexsort_rows = function(x, _, c) return {equal(dl.lexsort(x), c.out1)} end

ops.searchsorted = function(x, p, c)
  return {equal(x:searchsorted(c.val, {side = p.side}), c.out1)}
end

ops.take = function(x, p, c) return {equal(x:take(c.idx, {dim = p.dim}), c.out1)} end
ops.take_along_dim = function(x, p, c) return {equal(dl.take_along_dim(x, c.idx, p.dim), c.out1)} end
ops.put_along_dim = function(x, p, c)
  local y = dl.array(x)
  dl.put_along_dim(y, c.idx, c.val, p.dim)
  return {equal(y, c.out1)}
end
ops.mask_read = function(x, _, c) return {equal(x[c.mask], c.out1)} end
ops.mask_write = function(x, _, c)
  local y = dl.array(x)
  y[c.mask] = c.val
  return {equal(y, c.out1)}
end
ops.argwhere = function(x, _, c) return {equal(dl.argwhere(x), c.out1)} end
ops.cumsum = function(x, p, c) return {equal(x:cumsum{dim = p.dim}, c.out1)} end
ops.cumprod = function(x, p, c) return {equal(x:cumprod{dim = p.dim}, c.out1)} end
ops.diff = function(x, p, c) return {equal(dl.diff(x, {n = p.n, dim = p.dim}), c.out1)} end
ops.bincount = function(x, p, c) return {equal(dl.bincount(x, {minlength = p.minlength}), c.out1)} end
ops.bincount_w = function(x, p, c)
  return {equal(dl.bincount(x, {minlength = p.minlength, weights = c.w}), c.out1)}
end
ops.histogram = function(x, p, c)
  local counts, edges = dl.histogram(x, {bins = p.bins, range = {p.lo, p.hi}})
  return {equal(counts, c.out1)}, {equal(edges, c.out2)}
end
-- Without a range the edges run from the data's min to its max: with both
-- -0 and +0 in the data, which zero NumPy's min or max returns depends on
-- the order its loop meets them (its SIMD loops and ours differ), so an edge
-- that is zero may carry either sign.
ops.histogram_w = function(x, p, c)
  local counts, edges = dl.histogram(x, {bins = p.bins, weights = c.w})
  return {equal(counts, c.out1)}, {equal(edges, c.out2, true)}
end

-- (env -u LD_PRELOAD: under AddressSanitizer the runtime is preloaded into lua5.4; Python is
-- not instrumented, and its leaks at exit are not ours)
local cases = assert(io.popen(string.format("env -u LD_PRELOAD %s %s/select_cases.py %s %s", python,
                                            here, seed, dir)))
local passed, failed = 0, 0
for line in cases:lines() do
  local id, op, layout, params = line:match("^(%S+) (%S+) (%S+) (%S+)$")
  if id and (not only or only == id) then
    local c = {}
    for _, name in ipairs{"out1", "out2", "out3", "out4", "idx", "val", "w", "mask", "k1", "k2",
                          "k3"} do
      c[name] = load(id, name)
    end
    local ok, results = pcall(function()
      local x = apply_layout(load(id, "in"), layout)
      return {ops[op](x, params_of(params), c, layout)}
    end)
    local reason = not ok and ("raised " .. tostring(ok == false and results)) or nil
    for k, r in ipairs(ok and results or {}) do
      if not r[1] and not reason then reason = "result " .. k .. ": " .. tostring(r[2]) end
    end
    if reason then
      failed = failed + 1
      print(string.format("FAIL %s %s %s %s: %s", id, op, layout, params, reason))
    else
      passed = passed + 1
    end
  end
end
local ok_python = cases:close()
os.execute("rm -rf " .. dir)
print(string.format("%d passed, %d failed", passed, failed))
if not ok_python then
  print("select_cases.py failed")
  os.exit(1)
end
os.exit(failed == 0 and passed > 0 and 0 or 1)
