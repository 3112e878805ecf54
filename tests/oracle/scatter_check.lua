-- tests/oracle/scatter_check.lua: runs the cases tests/oracle/scatter_cases.py
-- writes (NumPy 1.24's ufunc.at as the oracle of dl.scatter_add, _mul, _max
-- and _min) and compares. Prints each mismatch, then "N passed, M failed";
-- exits non-zero on any failure.
--
--   lua5.4 tests/oracle/scatter_check.lua [seed] [fraction]
--
-- The seed defaults to a new one each run (printed, so a failure can be rerun
-- with it); ORACLE_SEED fixes it; ORACLE_SEEDS=n runs n seeds from it. fraction
-- (default 1, or ORACLE_FRACTION) scales the cases per op x dtype.
-- ORACLE_CASE=<id> runs one case; ORACLE_TRACE=1 names each case on stderr.
--
-- What is compared: the target after the call, dtype, shape and every element
-- exactly (both compute each update in the same dtype, in the same order; NaN
-- equals NaN, -0 equals 0), that the call returns the target, and errors by
-- code (NumPy's IndexError is INDEX, its ValueError for values that do not
-- broadcast SHAPE; DTYPE where dlbridge refuses a cast that NumPy 1.24's
-- ufunc.at makes unsafely). A failed call must leave the target as it was.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)
local fail, apply_layout, shape_text = checker.fail, util.apply_layout, util.shape_text

-- The elements of an array as a flat Lua list (bools as 0/1).
local function flat(x)
  if x.size == 0 then return {} end
  local a = x.dtype == "bool" and x:astype("uint8") or x
  local t = a:flatten():totable()
  return type(t) == "table" and t or {t}
end

-- The first element where a and b differ (NaN equal to NaN), or nil.
local function first_difference(a, b)
  for k = 1, #b do
    local x, y = a[k], b[k]
    if x ~= y and not (x ~= x and y ~= y) then return k, x, y end
  end
end

local function run_case(dir, id, op, layout, dims, form, outcome)
  local t = apply_layout(dl.load(dir .. "/" .. id .. "_t.npy"):copy(), layout)
  local idx = dl.load(dir .. "/" .. id .. "_i.npy")
  local v = dl.load(dir .. "/" .. id .. "_v.npy")
  if form == "number" then v = v:item() end
  if form == "alias" then v = t:slice(1, nil, nil, -1) end
  local before = flat(t)
  local opts = dims ~= "-" and {dim = tonumber(dims)} or nil
  local ok, got = pcall(dl["scatter_" .. op], t, idx, v, opts)
  if outcome ~= "ok" then
    if ok then
      fail(id, op .. ": expected " .. outcome .. ", the call returned")
    elseif not dl.is_error(got) or got.code ~= outcome then
      fail(id, op .. ": expected " .. outcome .. ", got " .. tostring(got))
    elseif first_difference(flat(t), before) then
      fail(id, op .. ": the failed call wrote the target")
    else
      checker.pass()
    end
    return
  end
  if not ok then
    fail(id, op .. ": NumPy returned, dlbridge raised " .. tostring(got))
    return
  end
  if got ~= t then
    fail(id, op .. ": did not return the target")
    return
  end
  local ref = dl.load(dir .. "/" .. id .. "_out.npy")
  if t.dtype ~= ref.dtype or shape_text(t.shape) ~= shape_text(ref.shape) then
    fail(id, string.format("%s: target %s %s, NumPy's %s %s", op, t.dtype, shape_text(t.shape),
      ref.dtype, shape_text(ref.shape)))
    return
  end
  local k, x, y = first_difference(flat(t), flat(ref))
  if k then
    fail(id, string.format("%s (%s, %s): element %d is %s, NumPy's %s", op, t.dtype,
      dl.is_array(v) and v.dtype or "number", k, tostring(x), tostring(y)))
    return
  end
  checker.pass()
end

checker.run("scatter_cases.py", 6, run_case)
