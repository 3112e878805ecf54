-- tests/oracle/quantile_check.lua: runs the cases tests/oracle/quantile_cases.py
-- writes (NumPy 1.24's median, quantile, percentile and nan- forms as the
-- oracle) and compares. Prints each mismatch, then "N passed, M failed";
-- exits non-zero on any failure.
--
--   lua5.4 tests/oracle/quantile_check.lua [seed] [fraction]
--
-- The seed defaults to a new one each run (printed, so a failure can be rerun
-- with it); ORACLE_SEED fixes it; ORACLE_SEEDS=n runs n seeds from it. fraction
-- (default 1, or ORACLE_FRACTION) scales the cases per op x dtype.
-- ORACLE_CASE=<id> runs one case; ORACLE_TRACE=1 names each case on stderr.
--
-- What is compared: the result's dtype and shape exactly (a Lua value where
-- NumPy's result is 0-d and no keepdims), and every value exactly: the
-- selection is exact and the arithmetic is NumPy's, so they agree bit for
-- bit (-0.0 and 0.0 compare equal: which one a tie gives is unspecified;
-- every NaN is equal). Errors by code: IndexError is INDEX, ValueError
-- VALUE, TypeError DTYPE.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)
local fail, apply_layout, shape_text = checker.fail, util.apply_layout, util.shape_text

-- The elements of an array as a flat Lua list.
local function flat(x)
  if x.size == 0 then return {} end
  local t = x:flatten():totable()
  return type(t) == "table" and t or {t}
end

local function same(x, y)
  return x == y or (x ~= x and y ~= y)
end

local function dims_of(text)
  if text == "all" then return nil end
  local list = {}
  for d in text:gmatch("[^,]+") do list[#list + 1] = tonumber(d) end
  if #list == 1 and not text:find(",") then return list[1] end
  return list
end

local function run_case(dir, id, op, layout, dims, keepdims, method, qtext, outcome)
  local a = apply_layout(dl.load(dir .. "/" .. id .. "_a.npy"), layout)
  local opts = {dim = dims_of(dims), keepdims = keepdims == "1"}
  if method ~= "-" then opts.method = method end
  local q
  if qtext == "array" then q = dl.load(dir .. "/" .. id .. "_q.npy")
  elseif qtext == "nan" then q = 0 / 0
  elseif qtext ~= "-" then q = assert(tonumber(qtext)) end
  local ok, got
  if q == nil then ok, got = pcall(dl[op], a, opts)
  else ok, got = pcall(dl[op], a, q, opts) end
  if outcome ~= "ok" then
    local want = ({IndexError = "INDEX", ValueError = "VALUE", TypeError = "DTYPE"})[outcome]
    if ok then
      fail(id, op .. ": NumPy raised " .. outcome .. ", dlbridge returned")
    elseif not dl.is_error(got) or got.code ~= want then
      fail(id, op .. ": expected " .. want .. ", got " .. tostring(got))
    else checker.pass() end
    return
  end
  if not ok then
    fail(id, op .. ": NumPy returned, dlbridge raised " .. tostring(got))
    return
  end
  local ref = dl.load(dir .. "/" .. id .. "_out.npy")
  if not dl.is_array(got) then
    if ref.ndim ~= 0 then
      fail(id, string.format("%s: a Lua value, NumPy's shape %s", op, shape_text(ref.shape)))
    elseif not same(got, ref:item()) then
      fail(id, string.format("%s: %s, NumPy %s", op, tostring(got), tostring(ref:item())))
    else checker.pass() end
    return
  end
  if ref.ndim == 0 then
    fail(id, op .. ": an array for NumPy's 0-d result")
    return
  end
  if got.dtype ~= ref.dtype then
    fail(id, string.format("%s: dtype %s, NumPy's %s", op, got.dtype, ref.dtype))
    return
  end
  if shape_text(got.shape) ~= shape_text(ref.shape) then
    fail(id, string.format("%s: shape %s, NumPy's %s", op, shape_text(got.shape),
      shape_text(ref.shape)))
    return
  end
  local x, y = flat(got), flat(ref)
  for k = 1, #y do
    if not same(x[k], y[k]) then
      fail(id, string.format("%s: element %d is %s, NumPy's %s", op, k, tostring(x[k]),
        tostring(y[k])))
      return
    end
  end
  checker.pass()
end

checker.run("quantile_cases.py", 8, run_case)
