-- tests/oracle/vecmath_check.lua: runs the cases tests/oracle/vecmath_cases.py
-- writes (NumPy 1.24's cross, outer, linalg.norm, einsum and interp as the
-- oracle of dl.cross, dl.outer, dl.norm, dl.einsum and dl.interp) and compares.
-- Prints each mismatch, then "N passed, M failed"; exits non-zero on any failure.
--
--   lua5.4 tests/oracle/vecmath_check.lua [seed] [fraction]
--
-- The seed defaults to a new one each run (printed, so a failure can be rerun
-- with it); ORACLE_SEED fixes it; ORACLE_SEEDS=n runs n seeds from it. fraction
-- (default 1, or ORACLE_FRACTION) scales the cases per function.
-- ORACLE_CASE=<id> runs one case; ORACLE_TRACE=1 names each case on stderr.
--
-- What is compared: the result's dtype and shape exactly (a 0-d result is a
-- Lua value, as NumPy's is a scalar); integer and boolean values exactly;
-- cross, outer and interp bit for bit (the same operations in the same
-- order); norm and einsum within 1e-10 (float64), 1e-5 (float32) or 1e-2
-- (float16) of the largest magnitude of NumPy's result (their sums and BLAS
-- products add in another order), NaN against NaN and inf against inf
-- exactly; refusals by error code.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)
local fail, apply_layout, shape_text = checker.fail, util.apply_layout, util.shape_text

-- The elements of an array or a Lua value as a flat list of numbers
-- (booleans 0/1, complex numbers as re, im).
local function flat(x)
  local out = {}
  local function add(v)
    if type(v) == "boolean" then out[#out + 1] = v and 1 or 0
    elseif type(v) == "table" then
      out[#out + 1] = v.re or 0
      out[#out + 1] = v.im or 0
    else out[#out + 1] = v end
  end
  if type(x) ~= "userdata" then add(x) return out end
  if x.size == 0 then return out end
  local t = x:flatten():totable()
  for k = 1, #t do add(t[k]) end
  return out
end

local function number(text)
  if text == "nan" then return 0 / 0 end
  if text == "inf" then return math.huge end
  if text == "-inf" then return -math.huge end
  return tonumber(text)
end

-- max |a - b| over the elements relative to 1 + max |b| (finite ones);
-- NaN must meet NaN and an infinity the same infinity.
local function rel_error(a, b)
  local worst, scale = 0, 1
  if #a ~= #b then return math.huge end
  for k = 1, #b do
    if b[k] == b[k] and math.abs(b[k]) ~= math.huge then scale = math.max(scale, 1 + math.abs(b[k])) end
  end
  for k = 1, #b do
    local x, y = a[k], b[k]
    if (x ~= x) ~= (y ~= y) then return math.huge end
    if x == x and x ~= y then
      if math.abs(y) == math.huge or math.abs(x) == math.huge then return math.huge end
      worst = math.max(worst, math.abs(x - y) / scale)
    end
  end
  return worst
end

local function tolerance(op, dtype)
  if op == "cross" or op == "outer" or op == "interp" then return 0 end
  if dtype == "float16" then return 1e-2 end
  if dtype == "float32" or dtype == "complex64" then return 1e-5 end
  if dtype == "float64" or dtype == "complex128" then return 1e-10 end
  return 0
end

-- NumPy's dtype of a Lua value result (a 0-d result).
local function same_kind_of_value(v, dtype)
  if type(v) == "boolean" then return dtype == "bool" end
  if type(v) == "table" then return dtype:match("^complex") ~= nil end
  return type(v) == "number" and dtype ~= "bool" and not dtype:match("^complex")
end

local function call_of(op, ops, params)
  if op == "cross" then return function() return dl.cross(ops[1], ops[2]) end end
  if op == "outer" then return function() return dl.outer(ops[1], ops[2]) end end
  if op == "einsum" then
    return function() return dl.einsum(params.sub, table.unpack(ops)) end
  end
  if op == "norm" then
    local opts = {keepdims = params.keepdims == "1"}
    if params.ord ~= "None" then
      opts.ord = (params.ord == "fro" or params.ord == "nuc") and params.ord or number(params.ord)
    end
    if params.dim then
      local dims = {}
      for d in params.dim:gmatch("[^,]+") do dims[#dims + 1] = tonumber(d) end
      opts.dim = #dims == 1 and dims[1] or dims
    end
    return function() return dl.norm(ops[1], opts) end
  end
  local opts = {}
  for _, key in ipairs({"left", "right", "period"}) do
    if params[key] then opts[key] = number(params[key]) end
  end
  return function() return dl.interp(ops[1], ops[2], ops[3], opts) end
end

local function run_case(dir, id, op, layouts, params_text, outcome)
  local params, ops = {}, {}
  for key, value in params_text:gmatch("([%w_]+)=([^;]*)") do params[key] = value end
  local k = 0
  for layout in layouts:gmatch("[^,]+") do
    ops[k + 1] = apply_layout(dl.load(string.format("%s/%s_a%d.npy", dir, id, k)), layout)
    k = k + 1
  end
  local ok, ours = pcall(call_of(op, ops, params))
  if outcome ~= "ok" then
    if ok then fail(id, op .. ": NumPy refused (" .. outcome .. "), dlbridge returned")
    elseif not dl.is_error(ours) or ours.code ~= outcome then
      fail(id, op .. ": expected " .. outcome .. ", got " .. tostring(ours))
    else checker.pass() end
    return
  end
  if not ok then
    fail(id, op .. " " .. params_text .. ": NumPy returned, dlbridge raised " .. tostring(ours))
    return
  end
  local ref = dl.load(string.format("%s/%s_out.npy", dir, id))
  if type(ours) ~= "userdata" then
    if ref.ndim ~= 0 or not same_kind_of_value(ours, ref.dtype) then
      fail(id, string.format("%s %s: a Lua value, NumPy's %s %s", op, params_text, ref.dtype,
        shape_text(ref.shape)))
      return
    end
  else
    if ours.dtype ~= ref.dtype then
      fail(id, string.format("%s %s: dtype %s, NumPy's %s", op, params_text, ours.dtype, ref.dtype))
      return
    end
    if shape_text(ours.shape) ~= shape_text(ref.shape) then
      fail(id, string.format("%s %s: shape %s, NumPy's %s", op, params_text,
        shape_text(ours.shape), shape_text(ref.shape)))
      return
    end
  end
  local tol = tolerance(op, ref.dtype)
  local e = rel_error(flat(ours), flat(ref))
  if e > tol then
    fail(id, string.format("%s %s: differs from NumPy by %.3g (tolerance %g)", op, params_text, e, tol))
    return
  end
  checker.pass()
end

checker.run("vecmath_cases.py", 5, run_case)
