-- empty_arrays_spec.lua -- empty and 0-d arrays, on every kind of backend.
--
-- An array with no elements (shape {0} or {3, 0}) and a 0-d array (shape
-- {}) are ordinary arrays: every function and method takes them and gives a
-- result or a dlbridge.Error with a code, never a crash, whatever backend
-- they live on. On a backend that hands out host pointers, an empty array
-- computes like a cpu one (there is nothing to point at, but nothing to read
-- either):
--
--   tb.register{name = "engine", host_pointer = true}
--   local x = dl.device_put(dl.zeros(0), "engine")
--   dl.sum(x)            --> 0.0, like NumPy's sum of nothing
--   dl.unique(x)         --> an empty array on engine:0
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local HOSTPTR, OPAQUE, QUEUED = "empty_hostptr", "empty_opaque", "empty_queued"
if not support.registered(HOSTPTR) then
  tb.register{name = HOSTPTR, host_pointer = true, exportable = true}
end
if not support.registered(OPAQUE) then tb.register{name = OPAQUE, exportable = false} end
if not support.registered(QUEUED) then
  tb.register_queued{name = QUEUED, devices = 1, max_delay_us = 20, seed = 11}
end

local backends = {"cpu", HOSTPTR, OPAQUE, QUEUED}
local cuda = support.backend_info("cuda")
if cuda and cuda.available then backends[#backends + 1] = "cuda" end

describe("an empty array on a backend that hands out host pointers", function()
  local x = dl.device_put(dl.zeros(0, {dtype = "float32"}), HOSTPTR)

  it("reduces like NumPy's empty reductions", function()
    assert.equal(0, dl.sum(x))
    assert.equal(1, dl.prod(x))
    assert.is_false(dl.any(x))
    assert.is_true(dl.all(x))
    assert.equal(0, dl.count_nonzero(x))
    local mean = dl.mean(x)
    assert.is_true(mean ~= mean) -- NaN
  end)

  it("selects, sorts and searches to empty results on the same backend", function()
    assert.same({0}, dl.unique(x).shape)
    assert.equal(HOSTPTR .. ":0", dl.unique(x).device)
    assert.same({0}, dl.nonzero(x).shape)
    assert.same({0, 1}, dl.argwhere(x).shape)
    assert.same({0}, x[dl.device_put(dl.zeros(0, {dtype = "bool"}), HOSTPTR)].shape)
    assert.same({1, 1}, dl.searchsorted(x, dl.device_put(dl.zeros(2), HOSTPTR)):to("cpu"):totable())
    assert.is_true(dl.array_equal(x, x))
    assert.is_true(dl.allclose(x, x))
  end)
end)

-- The public functions and methods, and argument patterns tried on each: a
-- result or a dlbridge.Error is right, anything else (a plain Lua error) is
-- a defect, and a crash ends the run.
local NOT_ARRAY_FUNCTIONS = { -- they take no arrays, or touch files or the state
  try = true, scope = true, traceback = true, readonly = true, load = true, load_safetensors = true,
  save = true, save_safetensors = true, memory = true, dtypes = true, backends = true,
}

local function sorted_functions(t)
  local names = {}
  for name, f in pairs(t) do
    if type(f) == "function" and not NOT_ARRAY_FUNCTIONS[name] then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

-- The Array methods (scripts call them as a:name()), but delete.
local function array_method_names()
  local names = {}
  for _, name in ipairs(support.ARRAY_METHODS) do
    if name ~= "delete" then names[#names + 1] = name end
  end
  return names
end

local function inputs(backend)
  local made = {}
  for _, shape in ipairs{{0}, {3, 0}} do
    for _, dtype in ipairs{"float64", "int32", "bool"} do
      made[#made + 1] = {shape = shape, dtype = dtype}
    end
  end
  made[#made + 1] = {scalar = 2, dtype = "float32"}
  made[#made + 1] = {scalar = 1, dtype = "int64"}
  for _, m in ipairs(made) do
    m.name = (m.scalar and "0-d " or ("{" .. table.concat(m.shape, ",") .. "} ")) .. m.dtype
    m.make = function()
      local host = m.scalar and dl.full({}, m.scalar, {dtype = m.dtype})
                   or dl.zeros(m.shape, {dtype = m.dtype})
      return backend == "cpu" and host or dl.device_put(host, backend)
    end
  end
  return made
end

local PATTERNS = {
  function(f, x) return f(x) end,
  function(f, x) return f(x, x) end,
  function(f, x) return f(x, 1) end,
  function(f, x) return f(x, {dim = 1}) end,
  function(f, x) return f(x, {dim = -1, keepdims = true}) end,
  function(f, x) return f(x, x, x) end,
  function(f, x) return f(x, {1}) end,
  function(f, x) return f(x, dl.zeros(0, {dtype = "int64"})) end,
}

local function check_all(label, calls)
  local plain = {}
  for i, c in ipairs(calls) do
    if i % 8 == 0 then collectgarbage() end -- the test backends hold few blocks
    for p, pattern in ipairs(PATTERNS) do
      local ok, err = pcall(pattern, c.f, c.make())
      if not ok and not dl.is_error(err) then
        plain[#plain + 1] = ("%s, pattern %d: %s"):format(c.name, p, tostring(err))
      end
    end
  end
  assert.equal(0, #plain, label .. ": plain Lua errors:\n" .. table.concat(plain, "\n"))
end

for _, backend in ipairs(backends) do
  describe("every function and method, on empty and 0-d arrays on " .. backend, function()
    for _, input in ipairs(inputs(backend)) do
      it("gives a result or a coded error for " .. input.name, function()
        local calls = {}
        for _, name in ipairs(sorted_functions(dl)) do
          calls[#calls + 1] = {name = "dl." .. name, f = dl[name], make = input.make}
        end
        for _, name in ipairs(array_method_names()) do
          calls[#calls + 1] = {
            name = "a:" .. name, make = input.make,
            f = function(x, ...) return x[name](x, ...) end,
          }
        end
        local rng = dl.random.default_rng(1)
        for name, f in dl.pairs(getmetatable(rng).__index) do -- a read-only stand-in
          if type(f) == "function" and name ~= "spawn" then
            calls[#calls + 1] = {
              name = "rng:" .. name, make = input.make,
              f = function(...) return f(rng, ...) end,
            }
          end
        end
        check_all(backend .. " " .. input.name, calls)
      end)
    end
  end)
end
