-- numpy_draws.lua -- NumPy as the oracle of dl.random (spec/random_spec.lua,
-- spec/lua53/random_spec.lua): each request is a NumPy expression on
-- rng = np.random.default_rng(seed); all the requests of a call go through
-- one /usr/bin/python3 run of tests/random/numpy_draws.py (Debian's NumPy
-- 1.24), which answers with the bytes of each result. Not a spec itself
-- (busted runs only *_spec files).
--
--   local numpy = require "numpy_draws"
--   local r = numpy.numpy_results{ { key = "k", seed = 1, expr = "rng.random(N)" } }
--   numpy.assert_same_bytes(r.k, dl.random.default_rng(1):random(numpy.N), "random")
local dl = require "dlbridge"
local support = require "support"

local M = {}

M.N = 10000 -- N in an expression: the number of outputs of each case

-- NumPy's bytes for each request {key =, seed =, expr =}: one python3 run
-- for all of them. A key maps to the hex of the result's bytes, or to
-- "!Error: message" when NumPy raised.
function M.numpy_results(requests)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  for _, r in ipairs(requests) do
    local seed = r.seed
    if type(seed) == "table" then
      local items = {}
      for k, v in ipairs(seed) do
        items[k] = type(v) == "string" and ("'" .. v .. "'") or tostring(v)
      end
      seed = "[" .. table.concat(items, ", ") .. "]"
    end
    f:write(r.key, "\t", tostring(seed), "\t", (r.expr:gsub("%f[%w_]N%f[^%w_]", tostring(M.N))), "\n")
  end
  f:close()
  -- LD_PRELOAD is cleared: a sanitizer build preloads its runtime for lua5.4 only.
  local pipe = assert(io.popen("LD_PRELOAD= /usr/bin/python3 tests/random/numpy_draws.py " .. path))
  local out = pipe:read("*a")
  local ok = pipe:close()
  os.remove(path)
  assert(ok, "tests/random/numpy_draws.py failed (is Debian's python3-numpy installed?)\n" .. out)
  local results = {}
  for key, value in out:gmatch("([^\t\n]+)\t([^\n]*)") do results[key] = value end
  return results
end

function M.from_hex(hex)
  return (hex:gsub("%x%x", function(b) return string.char(tonumber(b, 16)) end))
end

-- The bytes of a draw's result: an array's, or a Lua number's as NumPy's
-- scalar (float64, int64, bool).
local function bytes_of(v)
  if dl.is_array(v) then return v:tobytes() end
  if type(v) == "boolean" then return v and "\1" or "\0" end
  -- a Lua integer (5.3 and later) as int64, any other number as float64
  if math.type and math.type(v) == "integer" then return support.string_pack("<i8", v) end
  return support.string_pack("<d", v)
end

-- Asserts that the Lua result has NumPy's bytes; names the first element
-- that differs.
function M.assert_same_bytes(expected_hex, v, what)
  assert(expected_hex, what .. ": NumPy gave no result")
  assert(expected_hex:sub(1, 1) ~= "!", what .. ": NumPy raised " .. expected_hex)
  local expected, got = M.from_hex(expected_hex), bytes_of(v)
  if expected == got then return end
  local item = dl.is_array(v) and v.itemsize or 8
  local first = 1
  while expected:byte(first) == got:byte(first) do first = first + 1 end
  error(string.format("%s: %d bytes from NumPy, %d here; element %d differs", what, #expected,
                      #got, math.floor((first - 1) / item) + 1), 2)
end

return M
