-- tests/oracle/order_check.lua: runs the cases tests/oracle/order_cases.py
-- writes (NumPy 1.24's element-wise results as the oracle of their memory
-- order) and compares each result's strides, dim by dim (an extent-1 dim's
-- stride means nothing); the values are checked against the same operation
-- on C-ordered copies of the operands. Prints each mismatch, then
-- "N passed, M failed"; exits non-zero on any failure.
--
--   lua5.4 tests/oracle/order_check.lua [seed] [fraction]
--
-- ORACLE_SEED, ORACLE_SEEDS, ORACLE_CASE, ORACLE_TRACE as oracle_util.lua says.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)

local function list(text)
  local out = {}
  if text ~= "-" then
    for w in text:gmatch("[^.x]+") do out[#out + 1] = w == "*" and w or tonumber(w) end
  end
  return out
end

-- The view a token names (order_cases.py's view_of).
local function view_of(token, boolean)
  local shape, perm, steps = token:match("^([^/]+)/([^/]+)/([^/]+)$")
  shape, perm, steps = list(shape), list(perm), list(steps)
  local n = 1
  for _, e in ipairs(shape) do n = n * e end
  local v = dl.arange(n, {dtype = "float64"}):reshape(shape)
  if boolean then v = (v % 2):eq(0) end
  if #perm > 1 then v = v:permute(perm) end
  for d, step in ipairs(steps) do
    if step ~= 1 then v = v:slice(d, nil, nil, step) end
  end
  return v
end

local function run(op, v)
  if op == "add" then return v[1] + v[2] end
  if op == "multiply" then return v[1] * v[2] end
  if op == "sqrt" then return dl.sqrt(v[1]) end
  if op == "greater" then return v[1]:gt(v[2]) end
  return dl.where(v[1], v[2], v[3])
end

checker.run("order_cases.py", 6, function(_, id, op, t1, t2, t3, want)
  local views, copies = {}, {}
  for k, t in ipairs({t1, t2, t3}) do
    if t ~= "-" then
      views[k] = view_of(t, op == "where" and k == 1)
      copies[k] = views[k]:copy()
    end
  end
  local r, ref = run(op, views), run(op, copies)
  local got, expect = {}, list(want)
  for d = 1, r.ndim do got[d] = r.shape[d] == 1 and "*" or r.strides[d] end
  if table.concat(got, ".") ~= table.concat(expect, ".") then
    return checker.fail(id, string.format("%s: strides %s, NumPy's %s", op,
      table.concat(got, "."), want))
  end
  if not dl.array_equal(r, ref) then return checker.fail(id, op .. ": the values differ") end
  checker.pass()
end)
