-- support.lua -- helpers shared by the specs.
--
--   local support = require "support"   -- .busted puts spec/?.lua on the path
--
-- Not a spec itself: busted only runs files whose names match "_spec".
local dl = require "dlbridge"
local assert = require "luassert"  -- the same object busted gives the specs

local support = {}

-- Calls f(...) expecting a dlbridge.Error; `succeeded` is the message if it
-- does not fail. Returns the error object.
local function raised(succeeded, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, succeeded)
  assert.is_true(dl.is_error(err), "expected a dlbridge.Error, got " .. type(err) .. ": "
    .. tostring(err))
  return err
end

-- The dlbridge.Error that f(...) raises (fails the test if f succeeds or
-- raises anything else).
function support.error_of(f, ...)
  return raised("expected the call to fail", f, ...)
end

-- The code of the dlbridge.Error that f(...) raises (checked as error_of does).
function support.code_of(f, ...)
  return raised("expected the call to fail", f, ...).code
end

-- expect_code("SHAPE", f, ...): f(...) must raise a dlbridge.Error with that
-- code. Returns the error.
function support.expect_code(code, f, ...)
  local err = raised("expected " .. code .. ", but the call succeeded", f, ...)
  assert.equal(code, err.code, tostring(err))
  return err
end

-- Resident memory of this process, in MiB (reads VmRSS from Linux's
-- /proc/self/status).
function support.rss_mib()
  local f = io.open("/proc/self/status", "r")
  assert(f, "cannot open /proc/self/status: these memory checks need Linux's /proc")
  local status = f:read("*a")
  f:close()
  local kb = status:match("VmRSS:%s*(%d+)%s*kB")
  assert(kb, "no VmRSS line in /proc/self/status")
  return tonumber(kb) / 1024
end

-- The dl.backends() entry named name, or nil.
function support.backend_info(name)
  for _, b in ipairs(dl.backends()) do
    if b.name == name then return b end
  end
end

-- Whether a backend named name is registered. Backend names are per
-- lua_State and busted runs every spec file in one state, so a file
-- registers its test backends only when this is false.
function support.registered(name)
  return support.backend_info(name) ~= nil
end

-- A read-only array: expand broadcasts with stride 0.
function support.readonly_array()
  return dl.array{1, 2, 3}:view{1, 3}:expand{2, 3}
end

-- Files: support.temp_path() is a fresh temporary path; a spec file that
-- uses it removes them all after each test with
-- after_each(support.remove_temp_files).
local temp_paths = {}
function support.temp_path()
  local path = os.tmpname()
  temp_paths[#temp_paths + 1] = path
  return path
end

function support.remove_temp_files()
  for _, path in ipairs(temp_paths) do os.remove(path) end
  temp_paths = {}
end

-- The bytes of the file at path.
function support.file_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Writes the string s as the file at path.
function support.write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- The methods of an Array (a:name(...)), sorted. Lua 5.1's debug library
-- cannot read the upvalues of Array's C __index, where the method table is,
-- so the specs that go through every method take the names from here;
-- spec/lua53/arguments_spec.lua checks that the list is complete.
support.ARRAY_METHODS = {
  "T", "__dlpack", "__dlpack_device", "abs", "acos", "add", "all", "any", "argmax", "argmin",
  "argsort", "asin", "astype", "atan", "atan2", "bitwise_and", "bitwise_not", "bitwise_or",
  "bitwise_xor", "ceil", "clip", "contiguous", "copy", "copy_from", "cos", "cosh",
  "count_nonzero", "cumprod", "cumsum", "delete", "div", "divide", "dot", "eq", "equal", "exp",
  "exp2", "expand", "expm1", "fill", "flatten", "floor", "floor_divide", "ge", "get",
  "greater", "greater_equal", "gt", "invert", "is_contiguous", "isfinite", "isinf", "isnan",
  "item", "le", "left_shift", "less", "less_equal", "log", "log10", "log1p", "log2",
  "logical_and", "logical_not", "logical_or", "logical_xor", "lt", "matmul", "max", "maximum",
  "mean", "min", "minimum", "mod", "mul", "multiply", "nanargmax", "nanargmin", "nanmax",
  "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "narrow", "ne", "neg", "negative",
  "nonzero", "not_equal", "permute", "pow", "power", "prod", "ptr", "ravel", "reshape",
  "right_shift", "round", "searchsorted", "select", "set", "sign", "sin", "sinh", "slice",
  "sort", "sqrt", "squeeze", "std", "sub", "subtract", "sum", "take", "tan", "tanh", "to",
  "to_dlpack", "tobytes", "topk", "totable", "transpose", "trunc", "unsqueeze", "var", "view"
}

-- Version differences, kept here so that the specs read the same on every
-- Lua (5.1, 5.2, 5.3, 5.4 and LuaJIT).

-- support.string_pack(fmt, ...) and support.string_unpack(fmt, s, pos) are
-- string.pack and string.unpack on Lua 5.3 and later. On Lua 5.1, 5.2 and
-- LuaJIT they do the same for the formats the specs use: "<", ">" and "="
-- (little-endian, big-endian, native: little-endian), i1..i8 and I1..I8
-- (integers within +-2^53), "f" and "d"; i and I alone are 4 bytes.
local function parse_format(fmt)
  local items, little, i = {}, true, 1
  while i <= #fmt do
    local c = fmt:sub(i, i)
    i = i + 1
    if c == "<" or c == "=" then little = true
    elseif c == ">" then little = false
    elseif c == "i" or c == "I" or c == "f" or c == "d" then
      local digits = fmt:match("^%d+", i) or ""
      i = i + #digits
      local size = tonumber(digits) or (c == "d" and 8 or 4)
      items[#items + 1] = {kind = c, size = size, little = little}
    elseif c ~= " " then
      error("support.string_pack: format option '" .. c .. "' is not supported", 3)
    end
  end
  return items
end

local function round_half_even(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end

-- The bytes (numbers, lowest first) of x as an IEEE 754 float of size 4 or 8
-- bytes, rounded to nearest, ties to even.
local function float_bytes(x, size)
  local mant_bits, exp_bits = size == 4 and 23 or 52, size == 4 and 8 or 11
  local bias = 2 ^ (exp_bits - 1) - 1
  local sign = (x < 0 or (x == 0 and 1 / x < 0)) and 1 or 0
  x = math.abs(x)
  local exp_field, mant
  if x ~= x then
    exp_field, mant = 2 ^ exp_bits - 1, 2 ^ (mant_bits - 1)
  elseif x == math.huge then
    exp_field, mant = 2 ^ exp_bits - 1, 0
  elseif x == 0 then
    exp_field, mant = 0, 0
  else
    local m, e = math.frexp(x) -- x = m * 2^e, 0.5 <= m < 1
    if e - 1 + bias >= 1 then
      exp_field, mant = e - 1 + bias, round_half_even((m * 2 - 1) * 2 ^ mant_bits)
    else -- subnormal
      exp_field, mant = 0, round_half_even(x / 2 ^ (1 - bias - mant_bits))
    end
    -- a mantissa rounded up to 2^mant_bits carries into the exponent (up to inf)
    if mant >= 2 ^ mant_bits then exp_field, mant = exp_field + 1, 0 end
    if exp_field >= 2 ^ exp_bits - 1 then exp_field, mant = 2 ^ exp_bits - 1, 0 end
  end
  -- bytes from the low end: the mantissa, then exponent and sign
  local bytes, high = {}, sign * 2 ^ exp_bits + exp_field -- the bits above the mantissa
  local low = mant
  for k = 1, size do
    -- the next 8 bits of (high * 2^mant_bits + low), taken without forming it
    local byte = low % 256
    low = (low - byte) / 256
    bytes[k] = byte
  end
  -- put high's bits in at bit mant_bits
  local shift = mant_bits
  local k = math.floor(shift / 8) + 1
  local value = high * 2 ^ (shift % 8)
  while value > 0 do
    local byte = value % 256
    bytes[k] = bytes[k] + byte
    value = (value - byte) / 256
    k = k + 1
  end
  return bytes
end

local function int_bytes(v, size, signed)
  if v ~= math.floor(v) then error("support.string_pack: not an integer: " .. tostring(v), 3) end
  local bytes, negative = {}, v < 0
  if negative and not signed then error("support.string_pack: a negative value for I", 3) end
  if negative then v = -v - 1 end -- two's complement: the bytes of -v - 1, inverted
  for k = 1, size do
    local byte = v % 256
    v = (v - byte) / 256
    bytes[k] = negative and 255 - byte or byte
  end
  return bytes
end

local function pack(fmt, ...)
  local out, args = {}, {...}
  for n, item in ipairs(parse_format(fmt)) do
    local v = args[n]
    local bytes
    if item.kind == "f" or item.kind == "d" then
      bytes = float_bytes(v, item.size)
    else
      bytes = int_bytes(v, item.size, item.kind == "i")
    end
    local chars = {}
    for k = 1, item.size do
      chars[item.little and k or item.size + 1 - k] = string.char(bytes[k])
    end
    out[#out + 1] = table.concat(chars)
  end
  return table.concat(out)
end

local function unpack_value(item, s, pos)
  local bytes = {}
  for k = 1, item.size do
    bytes[k] = s:byte(item.little and pos + k - 1 or pos + item.size - k)
  end
  if item.kind == "i" or item.kind == "I" then
    local negative = item.kind == "i" and bytes[item.size] >= 128
    local v = 0
    for k = item.size, 1, -1 do v = v * 256 + (negative and 255 - bytes[k] or bytes[k]) end
    return negative and -v - 1 or v
  end
  -- a float: the mantissa's bits, then the exponent's, then the sign
  local mant_bits, exp_bits = item.size == 4 and 23 or 52, item.size == 4 and 8 or 11
  local mant, high = 0, 0 -- high: the bits above the mantissa
  for k = item.size, 1, -1 do
    local bit = 8 * (k - 1) -- of this byte's lowest bit
    local b = bytes[k]
    if bit >= mant_bits then
      high = high * 256 + b
    elseif bit + 8 <= mant_bits then
      mant = mant + b * 2 ^ bit
    else -- split between the two
      local low_bits = mant_bits - bit
      local low = b % 2 ^ low_bits
      mant = mant + low * 2 ^ bit
      high = high * 2 ^ (8 - low_bits) + (b - low) / 2 ^ low_bits
    end
  end
  local sign = high >= 2 ^ exp_bits and -1 or 1
  local exp_field = high % 2 ^ exp_bits
  local bias = 2 ^ (exp_bits - 1) - 1
  if exp_field == 2 ^ exp_bits - 1 then
    if mant ~= 0 then return 0 / 0 end
    return sign * math.huge
  elseif exp_field == 0 then
    return sign * mant * 2 ^ (1 - bias - mant_bits)
  end
  return sign * (1 + mant / 2 ^ mant_bits) * 2 ^ (exp_field - bias)
end

local function unpack(fmt, s, pos)
  pos = pos or 1
  local values = {}
  for n, item in ipairs(parse_format(fmt)) do
    values[n] = unpack_value(item, s, pos)
    pos = pos + item.size
  end
  values[#values + 1] = pos
  return (table.unpack or _G.unpack)(values, 1, #values)
end

support.string_pack = string.pack or pack
support.string_unpack = string.unpack or unpack

-- An object that calls f when the collector finalizes it (a table with __gc
-- on Lua 5.2 and later; on Lua 5.1 and LuaJIT only userdata have
-- finalizers: newproxy makes one).
function support.finalized_by(f)
  if newproxy then
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = f
    return proxy
  end
  return setmetatable({}, {__gc = f})
end

-- The command that runs the Lua these specs run on, for a child process:
-- "lua5.1" ... "lua5.4" or "luajit".
function support.lua_command()
  if jit then return "luajit" end
  return "lua" .. _VERSION:match("%d+%.%d+")
end

-- The garbage collection specs' loop: `iterations` rounds of 8 new float32
-- 640x480x3 frames (3.5 MiB each), each round's batch kept for `keep`
-- rounds, beside `heap_mib` MiB of ordinary Lua strings; returns the
-- highest dl.memory().in_use seen and the most frame bytes reachable.
function support.frame_batches(iterations, keep, heap_mib)
  local MiB = 1024 * 1024
  local heap = {}
  for i = 1, heap_mib do heap[i] = string.rep("x", MiB - 64) .. i end
  local batches, peak = {}, 0
  for it = 1, iterations do
    local batch = {}
    batches[it % keep] = batch -- the batch of `keep` rounds ago becomes garbage
    for i = 1, 8 do batch[i] = dl.empty({921600}, {dtype = "float32"}) end
    peak = math.max(peak, dl.memory().in_use)
  end
  assert.equal(heap_mib, #heap)
  return peak, keep * 8 * 921600 * 4
end

return support
