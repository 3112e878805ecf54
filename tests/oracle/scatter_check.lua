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

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle"
local seed = tonumber(arg[1] or os.getenv("ORACLE_SEED") or
  tostring((os.time() * 7919 + math.floor(os.clock() * 1e6)) % 1000000))
local seeds = tonumber(os.getenv("ORACLE_SEEDS") or "1")
local fraction = arg[2] or os.getenv("ORACLE_FRACTION") or "1"
local only_case = os.getenv("ORACLE_CASE")
local trace = os.getenv("ORACLE_TRACE") == "1"
local python = os.getenv("ORACLE_PYTHON") or "/usr/bin/python3"

local passed, failed = 0, 0
local function fail(id, what)
  failed = failed + 1
  print(string.format("FAIL %s: %s", id, what))
end

local function apply_layout(a, layout)
  if layout == "T" then return a:transpose(a.ndim - 1, a.ndim) end
  if layout == "rev1" then return a:slice(1, nil, nil, -1) end
  if layout == "step1" then return a:slice(1, nil, nil, 2) end
  return a
end

local function shape_text(s)
  local t = {}
  for k = 1, #s do t[k] = tostring(s[k]) end
  return "(" .. table.concat(t, ", ") .. ")"
end

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
      passed = passed + 1
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
  passed = passed + 1
end

local function run_seed(s)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local cases = assert(io.popen(string.format("env -u LD_PRELOAD %s %s/scatter_cases.py %d %s %s",
    python, here, s, dir, fraction)))
  local lines = {}
  for line in cases:lines() do lines[#lines + 1] = line end
  local ok_python = cases:close()
  if not ok_python then
    print("scatter_cases.py failed (is python3-numpy installed?)")
    os.exit(1)
  end
  for _, line in ipairs(lines) do
    local id, op, layout, dims, form, outcome =
      line:match("^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$")
    if id and (not only_case or only_case == id) then
      if trace then io.stderr:write(id, " ", op, "\n") end
      local ok, err = pcall(run_case, dir, id, op, layout, dims, form, outcome)
      if not ok then fail(id, op .. ": the checker failed: " .. tostring(err)) end
    end
  end
  os.execute("rm -rf " .. dir)
  return #lines
end

local total = 0
for k = 0, seeds - 1 do
  print("seed " .. (seed + k))
  total = total + run_seed(seed + k)
end
print(string.format("%d passed, %d failed (%d cases, %d seeds)", passed, failed, total, seeds))
os.exit(failed == 0 and 0 or 1)
