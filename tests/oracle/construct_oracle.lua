-- construct_oracle.lua -- NumPy as the oracle of the construction, shape and
-- comparison helpers (spec/construction_helpers_spec.lua,
-- spec/shape_helpers_spec.lua, spec/comparing_spec.lua): each case is a
-- dlbridge call and the same call written as a NumPy expression; all the
-- cases of a spec file go through one /usr/bin/python3 run of
-- tests/oracle/helpers_cases.py (Debian's NumPy 1.24), and the results are
-- compared (bytes exactly, or values within a tolerance). Not a spec itself
-- (it lives with the oracle; .busted puts tests/oracle/ on the specs' path).
--
--   local oracle = require "construct_oracle"
--   local cases = oracle.new()
--   cases:add("tile", function() return dl.tile(x, {2, 3}) end,
--             "np.tile(" .. oracle.py(x) .. ", (2, 3))")
--   assert.same({}, cases:run())     -- the failures, described
--
-- The seed is new each run and printed with any failure; ORACLE_SEED fixes it.
local dl = require "dlbridge"

local M = {}

M.seed = tonumber(os.getenv("ORACLE_SEED")) or (os.time() % 100000)
math.randomseed(M.seed)

-- Every dtype NumPy has (bfloat16 is not one of them).
M.DTYPES = { "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128" }
M.FLOATS = { "float16", "float32", "float64", "complex64", "complex128" }

local function pick(list) return list[math.random(#list)] end
M.pick = pick

local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
local function unhex(h) return (h:gsub("..", function(x) return string.char(tonumber(x, 16)) end)) end

local function shape_text(shape)
  if #shape == 0 then return "-" end
  return table.concat(shape, "x")
end

-- A Lua value as Python source: arrays as A(...), lists as tuples.
function M.py(v)
  if dl.is_array(v) then
    local bytes = v:tobytes()
    return string.format("A('%s', '%s', '%s')", v.dtype, shape_text(v.shape),
                         #bytes > 0 and hex(bytes) or "-")
  elseif type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = M.py(x) end
    return "(" .. table.concat(parts, ", ") .. (#parts == 1 and ",)" or ")")
  elseif type(v) == "number" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    -- an integer (Lua 5.3 and later) as written, any other number to the last digit
    return math.type and math.type(v) == "integer" and tostring(v) or string.format("%.17g", v)
  elseif type(v) == "boolean" then
    return v and "True" or "False"
  elseif v == nil then
    return "None"
  end
  return string.format("%q", v)
end

-- A random element value of dtype (special: NaN, infinities and near
-- values among floats).
local function value(dtype, special)
  if dtype == "bool" then return math.random(2) == 1 end
  if dtype:match("^uint") then return math.random(0, 100) end
  if dtype:match("^int") then return math.random(-60, 60) end
  local function real()
    if special then
      local r = math.random(10)
      if r == 1 then return 0 / 0 elseif r == 2 then return math.huge
      elseif r == 3 then return -math.huge elseif r == 4 then return 1.0 end
    end
    return math.random(-400, 400) / 16
  end
  if dtype:match("^complex") then return { re = real(), im = real() } end
  return real()
end

-- A random array of dtype and shape in a random layout (contiguous,
-- transposed, a reversed or a stepped dim): a view whose values Python
-- sees through its bytes in row-major order.
function M.array(dtype, shape, special)
  local n = #shape
  local kind = n == 0 and 1 or math.random(4)
  local base_shape = {}
  for d = 1, n do base_shape[d] = shape[d] end
  local step_dim = math.random(math.max(n, 1))
  if kind == 2 then
    for d = 1, n do base_shape[d] = shape[n + 1 - d] end
  elseif kind == 4 then
    base_shape[step_dim] = shape[step_dim] * 2
  end
  local count = 1
  for d = 1, n do count = count * base_shape[d] end
  local values = {}
  for i = 1, count do values[i] = value(dtype, special) end
  local base = dl.array(values, { dtype = dtype }):reshape(base_shape)
  if kind == 2 then return base:transpose() end
  if kind == 3 then return base:slice(math.random(n), nil, nil, -1) end
  if kind == 4 then return base:slice(step_dim, nil, nil, 2) end
  return base
end

-- A random shape of ndim dims with extents in [lo, hi].
function M.shape(ndim, lo, hi)
  local s = {}
  for d = 1, ndim do s[d] = math.random(lo or 0, hi or 3) end
  return s
end

-- table.pack (Lua 5.2 and later) for every Lua: the values and their count n.
local function pack(...) return { n = select("#", ...), ... } end

local Cases = {}
Cases.__index = Cases

function M.new() return setmetatable({ list = {} }, Cases) end

-- cmp: nil (exact bytes), or {rtol =, atol =} (values, NaN equal to NaN).
function Cases:add(name, run, expr, cmp)
  self.list[#self.list + 1] = { name = name, run = run, expr = expr, cmp = cmp }
end

local function script_path()
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/oracle"
  return here .. "/helpers_cases.py"
end

-- Whether array got is the result NumPy encoded as "dtype:shape:hex".
local function matches(got, encoded, cmp)
  local dtype, shape, h = encoded:match("^([^:]+):([^:]+):(.*)$")
  if not dl.is_array(got) then return false, "got a " .. type(got) .. ", not an array" end
  if got.dtype ~= dtype then return false, "dtype " .. got.dtype .. ", NumPy's " .. dtype end
  if shape_text(got.shape) ~= shape then
    return false, "shape " .. shape_text(got.shape) .. ", NumPy's " .. shape
  end
  local bytes = h == "-" and "" or unhex(h)
  if not cmp then
    if got:tobytes() == bytes then return true end
    return false, "bytes differ: " .. hex(got:tobytes()):sub(1, 64) .. " vs " .. h:sub(1, 64)
  end
  local want = dl.frombytes(bytes, dtype, got.shape)
  if got.size == 0 or dl.allclose(got, want, { rtol = cmp.rtol, atol = cmp.atol or 0,
                                                equal_nan = true }) then
    return true
  end
  return false, "values differ beyond rtol " .. tostring(cmp.rtol)
end

-- Runs every case through NumPy and dlbridge; returns the failures (strings).
function Cases:run()
  local input = os.tmpname()
  local f = assert(io.open(input, "w"))
  for i, c in ipairs(self.list) do f:write(i, "\t", c.expr, "\n") end
  f:close()
  local pipe = assert(io.popen("LD_PRELOAD= /usr/bin/python3 " .. script_path() .. " < " .. input))
  local answers = {}
  for line in pipe:lines() do
    local i, answer = line:match("^(%d+)\t(.*)$")
    answers[tonumber(i)] = answer
  end
  pipe:close()
  os.remove(input)
  local failures = {}
  for i, c in ipairs(self.list) do
    local answer = answers[i] or "?"
    local results = pack(pcall(c.run))
    local ok, why = true, nil
    local kind, rest = answer:sub(1, 1), answer:sub(3)
    if not results[1] then
      if kind ~= "E" or not dl.is_error(results[2]) then
        ok, why = false, "raised " .. tostring(results[2])
      end
    elseif kind == "E" then
      ok, why = false, "succeeded where NumPy raised " .. rest
    elseif kind == "B" then
      ok = results[2] == (rest == "true")
      why = "got " .. tostring(results[2]) .. ", NumPy's " .. rest
    elseif kind == "L" then
      local k = 0
      for encoded in rest:gmatch("[^;]+") do
        k = k + 1
        ok, why = matches(results[k + 1], encoded, c.cmp)
        if not ok then why = "result " .. k .. ": " .. why break end
      end
      if ok and k ~= results.n - 1 then ok, why = false, (results.n - 1) .. " results, NumPy's " .. k end
    elseif kind == "R" then
      ok, why = matches(results[2], rest, c.cmp)
    else
      ok, why = false, "no answer from NumPy: " .. answer
    end
    if not ok then
      failures[#failures + 1] = string.format("[seed %d] %s: %s\n    %s", M.seed, c.name,
                                              why or "?", c.expr:sub(1, 300))
    end
  end
  return failures
end

return M
