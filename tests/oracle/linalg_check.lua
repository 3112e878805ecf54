-- tests/oracle/linalg_check.lua: runs the cases tests/oracle/linalg_cases.py
-- writes (NumPy 1.24's numpy.linalg as the oracle of dl.linalg) and compares.
-- Prints each mismatch, then "N passed, M failed"; exits non-zero on any failure.
--
--   lua5.4 tests/oracle/linalg_check.lua [seed] [fraction]
--
-- The seed defaults to a new one each run (printed, so a failure can be rerun
-- with it); ORACLE_SEED fixes it; ORACLE_SEEDS=n runs n seeds from it. fraction
-- (default 1, or ORACLE_FRACTION) scales the cases per op x dtype.
-- ORACLE_CASE=<id> runs one case; ORACLE_TRACE=1 names each case on stderr.
--
-- What is compared: every result's dtype and shape exactly; values within
-- 1e-9 (float64) or 2e-6 (float32) of the largest magnitude of NumPy's result
-- (both call the same LAPACK routines on the same float64 numbers, so they
-- agree to rounding); lstsq's rank exactly; errors by code (NumPy's
-- LinAlgError is LINALG, its ValueError for shapes SHAPE). eigh's and svd's
-- vectors are defined up to the sign of each one: they are compared after
-- flipping each to NumPy's sign, where the values are apart (unique=1);
-- elsewhere they must be orthonormal and rebuild the matrix.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)
local fail, apply_layout, shape_text = checker.fail, util.apply_layout, util.shape_text

-- The elements of an array (or a number) as a flat Lua list.
local function flat(x)
  if type(x) == "number" then return {x} end
  if x.size == 0 then return {} end
  local t = x:flatten():totable()
  return type(t) == "table" and t or {t}
end

local function tolerance(dtype) return dtype == "float32" and 2e-6 or 1e-9 end

-- max |a - b| over the elements (NaN where both are NaN counts as equal),
-- relative to 1 + max |b|.
local function rel_error(a, b)
  local worst, scale = 0, 1
  for k = 1, #b do
    if math.abs(b[k]) > scale - 1 and b[k] == b[k] and math.abs(b[k]) ~= math.huge then
      scale = 1 + math.abs(b[k])
    end
  end
  for k = 1, #b do
    local x, y = a[k], b[k]
    local bad = (x ~= x) ~= (y ~= y)
    if not bad and x == x and x ~= y then
      if math.abs(y) == math.huge or math.abs(x) == math.huge then bad = true
      else worst = math.max(worst, math.abs(x - y) / scale) end
    end
    if bad then return math.huge end
  end
  return worst
end

local function same_shape(ours, ref)
  if type(ours) == "number" then return ref.ndim == 0 end
  if ours.ndim ~= ref.ndim then return false end
  for d = 1, ref.ndim do
    if ours.shape[d] ~= ref.shape[d] then return false end
  end
  return true
end

-- ours with each vector (a column: dim -1 picks; a row: dim -2) flipped to
-- the sign of NumPy's, where their dot product is negative.
local function flip_to(ours, ref, rows)
  if ours.size == 0 then return ours end
  local signs = dl.sum(ours * ref, {dim = rows and ours.ndim or ours.ndim - 1, keepdims = true})
  return ours * dl.where(dl.less(signs, 0), -1, 1)
end

-- Whether v (..., M, K) has orthonormal columns within tol.
local function orthonormal(v, tol)
  if v.size == 0 then return true end
  local g = dl.matmul(v:transpose(v.ndim - 1, v.ndim), v)
  local k = v.shape[v.ndim]
  local err = dl.max(dl.abs(g - dl.eye(k, {dtype = v.dtype})))
  return type(err) == "number" and err <= tol * 10 * k
end

local function compare_values(id, k, ours, ref, tol)
  local e = rel_error(flat(ours), flat(ref))
  if e > tol then
    fail(id, string.format("result %d differs from NumPy's by %.3g (tolerance %g)", k, e, tol))
    return false
  end
  return true
end

-- eigh and svd: values directly, vectors up to sign (or rebuilt).
local function compare_vectors(id, op, params, results, refs, a)
  local tol = tolerance(refs[1].dtype)
  if op == "eigh" then
    local w, v = results[1], results[2]
    if not compare_values(id, 1, w, refs[1], tol) then return end
    if params.unique == "1" then
      compare_values(id, 2, flip_to(v, refs[2], false), refs[2], 100 * tol)
    elseif not orthonormal(v, 100 * tol) then
      fail(id, "eigh: the eigenvectors are not orthonormal")
    end
    return
  end
  -- svd with u and vh: s directly; u's columns and vh's rows up to sign
  local u, s, vh = results[1], results[2], results[3]
  if not compare_values(id, 2, s, refs[2], tol) then return end
  if params.unique == "1" then
    compare_values(id, 1, flip_to(u, refs[1], false), refs[1], 100 * tol)
    compare_values(id, 3, flip_to(vh, refs[3], true), refs[3], 100 * tol)
    return
  end
  if not orthonormal(u, 100 * tol) then fail(id, "svd: u is not orthonormal") end
  if not orthonormal(vh:transpose(vh.ndim - 1, vh.ndim), 100 * tol) then
    fail(id, "svd: vh is not orthonormal")
  end
  local kk = s.shape[s.ndim]
  if kk > 0 and a.size > 0 then
    local us = u:narrow(u.ndim, 1, kk) * s:unsqueeze(s.ndim)
    local rebuilt = dl.matmul(us, vh:narrow(vh.ndim - 1, 1, kk))
    local af = dl.array(a, {dtype = rebuilt.dtype})
    compare_values(id, 0, rebuilt, af, 100 * tol)
  end
end

local function run_case(dir, id, op, la, lb, params_text, outcome)
  local params = {}
  for key, value in params_text:gmatch("([%w_]+)=([^;]+)") do params[key] = value end
  local a = apply_layout(dl.load(dir .. "/" .. id .. "_a.npy"), la)
  local b
  if op == "solve" or op == "lstsq" then b = apply_layout(dl.load(dir .. "/" .. id .. "_b.npy"), lb) end
  local L = dl.linalg
  local call
  if op == "solve" then call = function() return L.solve(a, b) end
  elseif op == "lstsq" then
    call = function()
      return L.lstsq(a, b, params.rcond ~= "-" and {rcond = tonumber(params.rcond)} or nil)
    end
  elseif op == "eigh" then call = function() return L.eigh(a, {UPLO = params.UPLO}) end
  elseif op == "svd" then
    call = function()
      return L.svd(a, {full_matrices = params.full_matrices == "1",
                       compute_uv = params.compute_uv == "1"})
    end
  elseif op == "qr" then call = function() return L.qr(a, {mode = params.mode}) end
  else call = function() return L[op](a) end end
  local results = table.pack(pcall(call))
  if outcome ~= "ok" then
    local want = outcome == "LinAlgError" and "LINALG" or "SHAPE"
    if results[1] then
      fail(id, op .. ": NumPy raised " .. outcome .. ", dlbridge returned")
    elseif not dl.is_error(results[2]) or results[2].code ~= want then
      fail(id, op .. ": expected " .. want .. ", got " .. tostring(results[2]))
    else checker.pass() end
    return
  end
  if not results[1] then
    fail(id, op .. ": NumPy returned, dlbridge raised " .. tostring(results[2]))
    return
  end
  table.remove(results, 1)
  results.n = results.n - 1
  local refs, k = {}, 0
  while true do
    local f = io.open(string.format("%s/%s_out%d.npy", dir, id, k), "rb")
    if not f then break end
    f:close()
    refs[k + 1] = dl.load(string.format("%s/%s_out%d.npy", dir, id, k))
    k = k + 1
  end
  if #refs ~= results.n then
    fail(id, string.format("%s: %d results, NumPy %d", op, results.n, #refs))
    return
  end
  local before = checker.failed
  for r = 1, #refs do
    local ours, ref = results[r], refs[r]
    if op == "lstsq" and r == 3 then
      if ours ~= ref:item() then fail(id, string.format("rank %s, NumPy %s", tostring(ours), tostring(ref:item()))) end
    elseif not same_shape(ours, ref) then
      fail(id, string.format("result %d has shape %s, NumPy's %s", r,
        type(ours) == "number" and "()" or shape_text(ours.shape), shape_text(ref.shape)))
    elseif type(ours) ~= "number" and ours.dtype ~= ref.dtype then
      fail(id, string.format("result %d is %s, NumPy's %s", r, ours.dtype, ref.dtype))
    end
  end
  if checker.failed > before then return end
  if (op == "eigh" or (op == "svd" and #refs == 3)) then
    compare_vectors(id, op, params, results, refs, a)
  else
    for r = 1, #refs do
      if not (op == "lstsq" and r == 3) then
        local dtype = type(results[r]) == "number" and refs[r].dtype or results[r].dtype
        compare_values(id, r, results[r], refs[r], tolerance(dtype) * (op == "lstsq" and 100 or 1))
      end
    end
  end
  if checker.failed == before then checker.pass() end
end

checker.run("linalg_cases.py", 6, run_case)
