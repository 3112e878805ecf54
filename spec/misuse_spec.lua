-- misuse_spec.lua -- the misuse catalogue.
--
-- Each case calls the API wrongly on purpose and shows the error code you get.
-- Whatever the mistake, dlbridge raises a dlbridge.Error with a stable code:
-- never a crash, never a plain string. The rule of thumb:
--   ARGUMENT  a wrong type (a string where a shape goes, a non-array self, ...)
--   SHAPE     a bad shape: negative, fractional, too many dims, wrong counts
--   INDEX     an index or dimension out of range (1-based; 0 is never valid)
--   DTYPE     an unknown dtype name
--   VALUE     an element value the dtype cannot hold (or that is no element)
--   UNKNOWN_DEVICE, DELETED, READ_ONLY, COPY_REQUIRED as their names say.
-- The last case checks that the Lua state is still fine after all of this.

local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code
local unpack = table.unpack or unpack -- Lua 5.1 and LuaJIT have only unpack

local function deleted_array()
  local a = dl.arange(6):view{2, 3}
  a:delete()
  return a
end

local nan, inf = 0 / 0, math.huge
local co = coroutine.create(function() end)

describe("shapes given to dl.zeros, dl.ones, dl.empty and dl.full", function()
  it("must be a table or an integer: nil, strings, booleans, functions, coroutines and userdata are ARGUMENT",
    function()
      expect_code("ARGUMENT", dl.zeros)
      expect_code("ARGUMENT", dl.zeros, "3")
      expect_code("ARGUMENT", dl.ones, true)
      expect_code("ARGUMENT", dl.empty, print)
      expect_code("ARGUMENT", dl.zeros, co)
      expect_code("ARGUMENT", dl.zeros, io.stdout)
      expect_code("ARGUMENT", dl.full, nil, 1)
    end)

  it("entries must be numbers, not strings or tables (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.zeros, {"2"})
    expect_code("ARGUMENT", dl.zeros, {{2}})
    expect_code("ARGUMENT", dl.zeros, {2, false})
  end)

  it("cannot be negative (SHAPE)", function()
    expect_code("SHAPE", dl.zeros, {-1})
    expect_code("SHAPE", dl.zeros, -1)
    expect_code("SHAPE", dl.ones, {2, -3})
    expect_code("SHAPE", dl.zeros, -2 ^ 63) -- math.mininteger (Lua 5.3 and later: spec/lua53)
  end)

  it("cannot be NaN, infinite, fractional or beyond 2^63 (SHAPE)", function()
    expect_code("SHAPE", dl.zeros, nan)
    expect_code("SHAPE", dl.zeros, {inf})
    expect_code("SHAPE", dl.zeros, {-inf})
    expect_code("SHAPE", dl.zeros, {2 ^ 63})
    expect_code("SHAPE", dl.zeros, {1.5})
  end)

  it("cannot overflow the element count or the address space (SHAPE)", function()
    expect_code("SHAPE", dl.zeros, {2 ^ 62, 2 ^ 62})
    expect_code("SHAPE", dl.zeros, 2 ^ 62)
    expect_code("SHAPE", dl.zeros, {2 ^ 61}) -- 2^61 float64 = 2^64 bytes
  end)

  it("have at most 32 dimensions (SHAPE)", function()
    local shape = {}
    for i = 1, 33 do shape[i] = 1 end
    expect_code("SHAPE", dl.zeros, shape)
  end)

  it("must be sequences: {x = 1} is ARGUMENT", function()
    expect_code("ARGUMENT", dl.zeros, {x = 1})
  end)

  it("must not mix in other keys: {2, dtype = 'int32'} is ARGUMENT (options go second)", function()
    expect_code("ARGUMENT", dl.zeros, {2, dtype = "int32"})
  end)

  it("an allocation the system refuses is OUT_OF_MEMORY", function()
    expect_code("OUT_OF_MEMORY", dl.zeros, {2 ^ 47}) -- 2^50 bytes
  end)
end)

describe("options tables", function()
  it("must be tables: a string or number is ARGUMENT", function()
    expect_code("ARGUMENT", dl.zeros, 2, "float32")
    expect_code("ARGUMENT", dl.zeros, {2}, 5) -- dl.zeros(2, 5) is the shape {2, 5}
    expect_code("ARGUMENT", dl.full, 2, 1, true)
  end)

  it("reject unknown keys, typos included (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.zeros, 2, {dtyp = "int8"})
    expect_code("ARGUMENT", dl.ones, 2, {"float32"})
    expect_code("ARGUMENT", dl.array, {1}, {copy = true})
  end)

  it("reject unknown dtype names, case-sensitively (DTYPE)", function()
    expect_code("DTYPE", dl.zeros, 2, {dtype = "float"})
    expect_code("DTYPE", dl.zeros, 2, {dtype = "int"})
    expect_code("DTYPE", dl.zeros, 2, {dtype = ""})
    expect_code("DTYPE", dl.zeros, 2, {dtype = "FLOAT32"})
  end)

  it("reject a dtype that is not a string (DTYPE)", function()
    expect_code("DTYPE", dl.zeros, 2, {dtype = 42})
    expect_code("DTYPE", dl.zeros, 2, {dtype = {}})
  end)

  it("reject unknown devices: 'gpu', 'cpu:1', 'cpu:x', 'cpu:99999999' (UNKNOWN_DEVICE)", function()
    expect_code("UNKNOWN_DEVICE", dl.zeros, 2, {device = "gpu"})
    expect_code("UNKNOWN_DEVICE", dl.zeros, 2, {device = "cpu:1"})
    expect_code("UNKNOWN_DEVICE", dl.zeros, 2, {device = "cpu:x"})
    expect_code("UNKNOWN_DEVICE", dl.zeros, 2, {device = "cpu:99999999"})
    expect_code("UNKNOWN_DEVICE", dl.zeros, 2, {device = "cpu:"})
    expect_code("UNKNOWN_DEVICE", dl.array, {1}, {device = ""})
  end)

  it("reject a device that is not a string (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.zeros, 2, {device = 0})
    expect_code("ARGUMENT", dl.zeros, 2, {device = true})
  end)
end)

describe("dl.array data", function()
  it("must be given (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.array)
    expect_code("ARGUMENT", dl.array, nil, {dtype = "int8"})
  end)

  it("cannot hold strings, functions, coroutines or userdata (VALUE)", function()
    expect_code("VALUE", dl.array, "abc")
    expect_code("VALUE", dl.array, {1, "2"})
    expect_code("VALUE", dl.array, {print})
    expect_code("VALUE", dl.array, co)
    expect_code("VALUE", dl.array, {io.stdout})
  end)

  it("cannot be ragged (SHAPE)", function()
    expect_code("SHAPE", dl.array, {{1, 2}, {3}})
    expect_code("SHAPE", dl.array, {1, {2}})
    expect_code("SHAPE", dl.array, {{1, 2}, {3, {4}}})
    expect_code("SHAPE", dl.array, {{1, 2}, 3})
  end)

  it("cannot be cyclic: t[1] = t is SHAPE", function()
    local t = {}
    t[1] = t
    expect_code("SHAPE", dl.array, t)
  end)

  it("cannot nest deeper than 32 levels (SHAPE)", function()
    local t = 1
    for _ = 1, 33 do t = {t} end
    expect_code("SHAPE", dl.array, t)
  end)

  it("must be sequences: {x = 1} and {[0] = 1} are ARGUMENT", function()
    expect_code("ARGUMENT", dl.array, {x = 1})
    expect_code("ARGUMENT", dl.array, {[0] = 1})
  end)

  it("must not mix in other keys: {1, 2, x = 3} is ARGUMENT, not silently {1, 2}", function()
    expect_code("ARGUMENT", dl.array, {1, 2, x = 3})
  end)

  it("must fit the requested dtype (VALUE)", function()
    expect_code("VALUE", dl.array, {1, 300}, {dtype = "int8"})
    expect_code("VALUE", dl.array, {-1}, {dtype = "uint8"})
    expect_code("VALUE", dl.array, {0.5}, {dtype = "int64"})
    expect_code("VALUE", dl.array, {2}, {dtype = "bool"})
  end)

  it("cannot be a deleted array (DELETED)", function()
    expect_code("DELETED", dl.array, deleted_array())
  end)
end)

describe("values the dtype cannot hold", function()
  it("integers out of range are VALUE", function()
    expect_code("VALUE", dl.full, 2, 128, {dtype = "int8"})
    expect_code("VALUE", dl.full, 2, -1, {dtype = "uint8"})
    expect_code("VALUE", dl.full, 2, 2 ^ 31, {dtype = "int32"})
    expect_code("VALUE", dl.full, 2, 2 ^ 63, {dtype = "int64"})
    expect_code("VALUE", dl.full, 2, 2 ^ 64, {dtype = "uint64"})
  end)

  it("NaN and infinities in integer dtypes are VALUE", function()
    expect_code("VALUE", dl.full, 2, nan, {dtype = "int64"})
    expect_code("VALUE", dl.full, 2, inf, {dtype = "int32"})
    expect_code("VALUE", dl.full, 2, -inf, {dtype = "uint16"})
  end)

  it("fractions in integer dtypes are VALUE (no silent truncation)", function()
    expect_code("VALUE", dl.full, 2, 1.5, {dtype = "int32"})
  end)

  it("bool holds only true, false, 0 and 1 (VALUE)", function()
    expect_code("VALUE", dl.full, 2, 2, {dtype = "bool"})
  end)

  it("finite values too large for float32 or float16 are VALUE", function()
    expect_code("VALUE", dl.full, 2, 1e300, {dtype = "float32"})
    expect_code("VALUE", dl.full, 2, 1e6, {dtype = "float16"})
  end)

  it("complex values with an imaginary part do not fit real dtypes (VALUE)", function()
    expect_code("VALUE", dl.full, 2, {re = 1, im = 2}, {dtype = "int32"})
    expect_code("VALUE", dl.full, 2, {re = "x"})
  end)

  it("a missing, string, table or function fill value is VALUE", function()
    expect_code("VALUE", dl.full, 2)
    expect_code("VALUE", dl.full, 2, "0")
    expect_code("VALUE", dl.full, 2, {})
    expect_code("VALUE", dl.full, 2, print)
  end)

  it("writes through a[i] = v, a:set and a:fill check values the same way", function()
    local a = dl.zeros(2, {dtype = "int8"})
    expect_code("VALUE", function() a[1] = 300 end)
    expect_code("VALUE", a.set, a, 1, -129)
    expect_code("VALUE", a.fill, a, 1000)
    expect_code("VALUE", function() a[1] = "7" end)
    expect_code("VALUE", function() a[1] = nil end)
    expect_code("VALUE", function() a[2] = {} end)
  end)
end)

describe("dl.frombytes", function()
  it("needs a string (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.frombytes, 42, "uint8")
    expect_code("ARGUMENT", dl.frombytes, {1, 2}, "uint8")
  end)

  it("needs a known dtype (DTYPE)", function()
    expect_code("DTYPE", dl.frombytes, "abcd")
    expect_code("DTYPE", dl.frombytes, "abcd", "float")
  end)

  it("rejects sizes that are not whole elements (SHAPE)", function()
    expect_code("SHAPE", dl.frombytes, "abc", "float32")
  end)

  it("rejects a shape that does not match the byte count (SHAPE)", function()
    expect_code("SHAPE", dl.frombytes, ("\0"):rep(8), "float32", {3})
    expect_code("SHAPE", dl.frombytes, "abcd", "uint8", {-1})
  end)
end)

describe("dl.arange and dl.linspace", function()
  it("need a number to start with (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.arange)
    expect_code("ARGUMENT", dl.arange, "10")
    expect_code("ARGUMENT", dl.linspace, 0)
  end)

  it("take at most three numbers and then an options table (ARGUMENT)", function()
    expect_code("ARGUMENT", dl.arange, 1, 2, 3, 4)
    expect_code("ARGUMENT", dl.arange, 10, "int8")
  end)

  it("arange rejects a zero step (ARGUMENT, like slice's step 0)", function()
    expect_code("ARGUMENT", dl.arange, 0, 10, 0)
    expect_code("ARGUMENT", dl.arange, 0, 1, 0.0)
  end)

  it("arange and linspace reject NaN and infinite bounds and steps (VALUE)", function()
    expect_code("VALUE", dl.arange, 0, nan)
    expect_code("VALUE", dl.arange, -inf, 0)
    expect_code("VALUE", dl.arange, 0, 1, nan)
    expect_code("VALUE", dl.linspace, 0, inf, 3)
    expect_code("VALUE", dl.linspace, nan, 1)
  end)

  it("arange rejects ranges with too many elements (SHAPE)", function()
    expect_code("SHAPE", dl.arange, -2 ^ 63, 2 ^ 63)
    expect_code("SHAPE", dl.arange, 0, 1e300, 1e-300)
  end)

  it("arange values must fit the requested dtype (VALUE)", function()
    expect_code("VALUE", dl.arange, 0, 300, {dtype = "int8"})
  end)

  it("linspace rejects a negative, fractional or NaN count (SHAPE)", function()
    expect_code("SHAPE", dl.linspace, 0, 1, -1)
    expect_code("SHAPE", dl.linspace, 0, 1, 1.5)
    expect_code("SHAPE", dl.linspace, 0, 1, nan)
    expect_code("SHAPE", dl.linspace, 0, 1, 2 ^ 63)
    expect_code("SHAPE", dl.linspace, 0, 1, 2 ^ 60)
  end)
end)

describe("methods called on something that is not an array", function()
  local a = dl.zeros{2, 3}

  it("a.copy(42) is ARGUMENT", function()
    expect_code("ARGUMENT", a.copy, 42)
  end)

  it("a.view(io.stdout, {2}) -- userdata of another kind -- is ARGUMENT", function()
    expect_code("ARGUMENT", dl.zeros(2).view, io.stdout, {2})
  end)

  it("a.get(nil, 1) and a.fill() without self are ARGUMENT", function()
    expect_code("ARGUMENT", a.get, nil, 1)
    expect_code("ARGUMENT", a.fill)
  end)

  it("strings, tables, functions, booleans and coroutines as self are ARGUMENT", function()
    expect_code("ARGUMENT", a.tobytes, "x")
    expect_code("ARGUMENT", a.totable, {})
    expect_code("ARGUMENT", a.set, true, 1, 1, 1)
    expect_code("ARGUMENT", a.contiguous, co)
    expect_code("ARGUMENT", a.is_contiguous, print)
  end)

  it("an error object as self is ARGUMENT", function()
    local _, err = pcall(dl.zeros, {-1})
    expect_code("ARGUMENT", a.reshape, err, {6})
  end)

  it("a.delete(42) is ARGUMENT (it only releases arrays)", function()
    expect_code("ARGUMENT", a.delete, 42)
    expect_code("ARGUMENT", a.delete, io.stdout)
  end)
end)

describe("indexing with a[i], a:get and a:set", function()
  local v = dl.arange(3)
  local m = dl.zeros{2, 3}

  it("index 0 is INDEX: indices are 1-based", function()
    expect_code("INDEX", function() return v[0] end)
    expect_code("INDEX", m.get, m, 0, 1)
  end)

  it("indices past either end are INDEX, except a[i] reads, which are nil as for a table", function()
    assert.is_nil(v[4])
    assert.is_nil(v[-4])
    expect_code("INDEX", function() v[4] = 1 end)
    expect_code("INDEX", function() v[-4] = 1 end)
    expect_code("INDEX", v.get, v, 4)
    expect_code("INDEX", m.get, m, 3, 1)
  end)

  it("NaN, infinities, fractions and 2^63 as indices are INDEX", function()
    expect_code("INDEX", function() return v[nan] end)
    expect_code("INDEX", function() return v[inf] end)
    expect_code("INDEX", function() return v[-inf] end)
    expect_code("INDEX", function() return v[1.5] end)
    expect_code("INDEX", function() return v[2 ^ 63] end)
  end)

  it("-2^63 and 2^62 are out of range, not wrapped around", function()
    -- (math.mininteger and math.maxinteger, Lua 5.3 and later: spec/lua53/misuse_spec.lua)
    assert.is_nil(v[-2 ^ 63])
    assert.is_nil(v[2 ^ 62])
    expect_code("INDEX", function() v[-2 ^ 63] = 0 end)
    expect_code("INDEX", function() v[2 ^ 62] = 0 end)
    expect_code("INDEX", m.set, m, -2 ^ 63, 1, 0)
  end)

  it("booleans and tables as keys are ARGUMENT", function()
    expect_code("ARGUMENT", function() return v[true] end)
    expect_code("ARGUMENT", function() return v[{}] end)
  end)

  it("string indices to get and set are ARGUMENT (no '1' coercion)", function()
    expect_code("ARGUMENT", m.get, m, "1", 2)
    expect_code("ARGUMENT", m.set, m, 1, true, 0)
  end)

  it("get and set need exactly one index per dimension (INDEX)", function()
    expect_code("INDEX", m.get, m)
    expect_code("INDEX", m.get, m, 1)
    expect_code("INDEX", m.get, m, 1, 2, 3)
    expect_code("INDEX", m.set, m, 1, 2) -- 2 is taken as the value: one index short
  end)

  it("a:set without a value is ARGUMENT", function()
    expect_code("ARGUMENT", m.set, m)
  end)

  it("a 0-d array cannot be indexed (INDEX) and has no length (SHAPE)", function()
    local s = dl.zeros{}
    expect_code("INDEX", function() return s[1] end)
    expect_code("INDEX", s.get, s, 1)
    expect_code("SHAPE", function() return #s end)
  end)

  it("arrays have no assignable fields: a.shape = {3} is ARGUMENT", function()
    expect_code("ARGUMENT", function() m.shape = {3} end)
    expect_code("ARGUMENT", function() m[true] = 1 end)
  end)

  it("assigning a row something that does not broadcast is SHAPE", function()
    expect_code("SHAPE", function() m[1] = {1, 2} end)
  end)
end)

describe("view methods", function()
  local m = dl.arange(6):view{2, 3}
  local v = dl.arange(5)

  it("view and reshape need a shape (ARGUMENT)", function()
    expect_code("ARGUMENT", m.view, m)
    expect_code("ARGUMENT", m.reshape, m, "6")
  end)

  it("reshape to a wrong element count is SHAPE", function()
    expect_code("SHAPE", m.reshape, m, {4})
    expect_code("SHAPE", m.view, m, {7})
    expect_code("SHAPE", m.reshape, m, {nan})
  end)

  it("at most one -1 and no other negatives in a new shape (SHAPE)", function()
    expect_code("SHAPE", m.view, m, {-1, -1})
    expect_code("SHAPE", m.view, m, {-2, -3})
    expect_code("SHAPE", m.view, m, {0, -1})
  end)

  it("a new shape with more than 32 dimensions is SHAPE", function()
    local shape = {6}
    for i = 2, 33 do shape[i] = 1 end
    expect_code("SHAPE", m.reshape, m, shape)
  end)

  it("view of a transposed array is COPY_REQUIRED", function()
    local t = m:transpose()
    expect_code("COPY_REQUIRED", t.view, t, {6})
  end)

  it("dimensions out of range are INDEX: 0, ndim+1, NaN, huge, -2^63", function()
    expect_code("INDEX", m.transpose, m, 0, 1)
    expect_code("INDEX", m.transpose, m, 1, 3)
    expect_code("INDEX", m.transpose, m, nan, 1)
    expect_code("INDEX", m.transpose, m, inf, 1)
    expect_code("INDEX", m.transpose, m, -2 ^ 63, 1)
    expect_code("INDEX", m.select, m, 3, 1)
    expect_code("INDEX", m.squeeze, m, 0)
  end)

  it("dimensions given as strings or missing are ARGUMENT", function()
    expect_code("ARGUMENT", m.transpose, m, "1", 2)
    expect_code("ARGUMENT", m.transpose, m, 1)
    expect_code("ARGUMENT", m.select, m)
    expect_code("ARGUMENT", m.unsqueeze, m)
    expect_code("ARGUMENT", m.squeeze, m, "1")
  end)

  it("permute needs a table (ARGUMENT)", function()
    expect_code("ARGUMENT", m.permute, m)
    expect_code("ARGUMENT", m.permute, m, 2, 1)
  end)

  it("permute with duplicates, too few entries or bad dims is INDEX", function()
    expect_code("INDEX", m.permute, m, {1, 1})
    expect_code("INDEX", m.permute, m, {1})
    expect_code("INDEX", m.permute, m, {0, 1})
    expect_code("INDEX", m.permute, m, {1, 3})
  end)

  it("narrow past the end is INDEX", function()
    expect_code("INDEX", v.narrow, v, 1, 4, 3)
    expect_code("INDEX", v.narrow, v, 1, 1, 2 ^ 62)
    expect_code("INDEX", v.narrow, v, 1, 0, 1)
    expect_code("INDEX", v.narrow, v, 1, -2 ^ 63, 1)
  end)

  it("narrow with a negative, NaN or fractional length is INDEX; a missing one is ARGUMENT",
    function()
      expect_code("INDEX", v.narrow, v, 1, 1, -1)
      expect_code("INDEX", v.narrow, v, 1, 1, nan)
      expect_code("INDEX", v.narrow, v, 1, 1, 0.5)
      expect_code("ARGUMENT", v.narrow, v, 1, 1)
      expect_code("ARGUMENT", v.narrow, v, 1, 1, "2")
    end)

  it("select past the end is INDEX", function()
    expect_code("INDEX", m.select, m, 1, 3)
    expect_code("INDEX", m.select, m, 2, -4)
  end)

  it("slice with step 0 is ARGUMENT", function()
    expect_code("ARGUMENT", v.slice, v, 1, 1, 5, 0)
  end)

  it("slice with a NaN, fractional, infinite or string step is ARGUMENT", function()
    expect_code("ARGUMENT", v.slice, v, 1, 1, 5, nan)
    expect_code("ARGUMENT", v.slice, v, 1, 1, 5, 1.5)
    expect_code("ARGUMENT", v.slice, v, 1, 1, 5, inf)
    expect_code("ARGUMENT", v.slice, v, 1, 1, 5, "1")
  end)

  it("slice bounds of 0, NaN or fractions are INDEX; strings are ARGUMENT", function()
    expect_code("INDEX", v.slice, v, 1, 0)
    expect_code("INDEX", v.slice, v, 1, nan)
    expect_code("INDEX", v.slice, v, 1, 1.5)
    expect_code("INDEX", v.slice, v, 1, 1, inf)
    expect_code("ARGUMENT", v.slice, v, 1, "1")
  end)

  it("squeeze of an extent other than 1 is SHAPE", function()
    expect_code("SHAPE", m.squeeze, m, 1)
  end)

  it("unsqueeze out of range is INDEX; past 32 dimensions is SHAPE", function()
    expect_code("INDEX", m.unsqueeze, m, 4)
    expect_code("INDEX", m.unsqueeze, m, -4)
    local shape = {}
    for i = 1, 32 do shape[i] = 1 end
    local full = dl.zeros(shape)
    expect_code("SHAPE", full.unsqueeze, full, 1)
  end)

  it("expand of an extent other than 1, or to fewer dims, is SHAPE", function()
    expect_code("SHAPE", v.expand, v, {3})
    expect_code("SHAPE", m.expand, m, {3})
    expect_code("SHAPE", m.expand, m, {-1, 2, 3})
    expect_code("SHAPE", dl.zeros(1).expand, dl.zeros(1), {-2})
    expect_code("ARGUMENT", m.expand, m)
  end)
end)

describe("data methods", function()
  local m = dl.zeros{2, 3}

  it("astype needs a known dtype name (DTYPE)", function()
    expect_code("DTYPE", m.astype, m)
    expect_code("DTYPE", m.astype, m, "float")
    expect_code("DTYPE", m.astype, m, 42)
  end)

  it("fill needs an element value (VALUE)", function()
    expect_code("VALUE", m.fill, m)
    expect_code("VALUE", m.fill, m, "0")
  end)

  it("copy_from needs a source: a missing one is ARGUMENT", function()
    expect_code("ARGUMENT", m.copy_from, m)
  end)

  it("copy_from a source that does not broadcast is SHAPE", function()
    expect_code("SHAPE", m.copy_from, m, dl.zeros(4))
    expect_code("SHAPE", m.copy_from, m, {{1, 2}, {3}})
  end)

  it("copy_from a deleted array is DELETED", function()
    expect_code("DELETED", m.copy_from, m, deleted_array())
  end)

  it("writing to an expand view is READ_ONLY, by every path", function()
    local e = dl.zeros(1):expand{3}
    expect_code("READ_ONLY", function() e[1] = 5 end)
    expect_code("READ_ONLY", e.set, e, 1, 5)
    expect_code("READ_ONLY", e.fill, e, 5)
    expect_code("READ_ONLY", e.copy_from, e, {1, 2, 3})
  end)

  it("tobytes of an expanded view too large for memory is OUT_OF_MEMORY", function()
    local huge = dl.zeros(1):expand{2 ^ 40} -- 8 TiB as bytes
    expect_code("OUT_OF_MEMORY", huge.tobytes, huge)
  end)
end)

describe("deleted arrays", function()
  local a = deleted_array()

  it("every method raises DELETED", function()
    local calls = {
      get = {1, 1}, set = {1, 1, 0}, view = {{6}}, reshape = {{6}}, transpose = {},
      permute = {{2, 1}}, narrow = {1, 1, 1}, select = {1, 1}, slice = {1, 1, 2},
      squeeze = {}, unsqueeze = {1}, expand = {{2, 3}}, contiguous = {},
      is_contiguous = {}, copy = {}, astype = {"int8"}, fill = {0},
      copy_from = {0}, totable = {}, tobytes = {},
    }
    for name, args in pairs(calls) do
      local err = expect_code("DELETED", a[name], a, unpack(args))
      assert.equal("Array:" .. name, err.op)
    end
  end)

  it("every attribute raises DELETED", function()
    for _, name in ipairs{"shape", "strides", "ndim", "size", "dtype", "itemsize", "nbytes",
      "device", "backend", "readonly"} do
      expect_code("DELETED", function() return a[name] end)
    end
  end)

  it("#a raises DELETED", function()
    expect_code("DELETED", function() return #a end)
  end)

  it("a[i] and a[i] = v raise DELETED", function()
    expect_code("DELETED", function() return a[1] end)
    expect_code("DELETED", function() a[1] = 0 end)
  end)

  it("tostring(a) and a:delete() do not raise", function()
    assert.equal("dlbridge.Array (deleted)", tostring(a))
    a:delete()
  end)

  it("a view made before the delete still works; the base does not", function()
    local base = dl.arange(5)
    local view = base:narrow(1, 2, 3)
    base:delete()
    assert.same({1, 2, 3}, view:totable())
    expect_code("DELETED", base.narrow, base, 1, 1, 1)
  end)

  it("deleting a view leaves its base working", function()
    local base = dl.arange(5)
    local view = base:narrow(1, 2, 3)
    view:delete()
    expect_code("DELETED", view.totable, view)
    assert.same({0, 1, 2, 3, 4}, base:totable())
  end)
end)

describe("hostile values: Lua code that runs in the middle of a call", function()
  it("an option key whose __tostring raises still gives ARGUMENT", function()
    local key = setmetatable({}, {__tostring = function() error("no") end})
    expect_code("ARGUMENT", dl.zeros, 2, {[key] = 1})
  end)

  it("a producer whose __dlpack lookup raises gives ARGUMENT, with its error in err.cause", function()
    local producer = setmetatable({}, {__index = function() error("boom") end})
    local err = select(2, pcall(dl.from_dlpack, producer))
    assert.equal("ARGUMENT", err.code)
    assert.matches("boom", err.cause)
  end)

  it("err:is on something that is not an error is ARGUMENT", function()
    expect_code("ARGUMENT", select(2, pcall(dl.zeros, -1)).is, 5)
  end)

  it("a value whose metamethods delete the array cannot crash copy_from, fill or a[i] = v", function()
    local a = dl.zeros(2)
    local sneaky = setmetatable({1, 2}, {__index = function() a:delete() end})
    pcall(a.copy_from, a, sneaky)   -- raw reads: the metamethod never runs
    local b = dl.zeros(3)
    local value = setmetatable({}, {__index = function() b:delete(); return 1 end})
    expect_code("VALUE", b.fill, b, value)
    expect_code("VALUE", function() b[1] = value end)
  end)

  it("a finalizer that deletes the array while a method runs gives DELETED, never a crash", function()
    local target, armed, hits, done = nil, false, 0, false
    local function bomb()
      support.finalized_by(function()
        if armed and target then target:delete(); hits = hits + 1 end
        if not done then bomb() end   -- re-arm: one finalizer is always pending
      end)
    end
    collectgarbage()
    bomb()
    -- (finalizers come due when the collector says: rounds until one has
    -- come due inside a call, 20 at the most)
    for _ = 1, 20 do
      for _, method in ipairs{"totable", "tobytes", "copy", "transpose", "astype"} do
        for _ = 1, 300 do
          target = dl.zeros{16, 16}
          armed = true
          local ok, err
          if method == "astype" then
            ok, err = pcall(target.astype, target, "float32")
          else
            ok, err = pcall(target[method], target)
          end
          armed = false
          assert.is_true(ok or err.code == "DELETED", tostring(err))
        end
      end
      if hits > 0 then break end
    end
    armed, done = false, true
    assert.is_true(hits > 0, "the finalizer never ran inside a call")
  end)
end)

describe("after the whole catalogue", function()
  it("the Lua state still creates, prints and collects arrays", function()
    collectgarbage("collect")
    local a = dl.arange(6):view{2, 3}
    assert.equal("array([[0, 1, 2],\n       [3, 4, 5]], shape=(2, 3), dtype=int64, device=cpu:0)",
      tostring(a))
    local b = dl.ones(3, {dtype = "float32"})
    b[2] = 5
    assert.same({1, 5, 1}, b:totable())
    assert.is_true(dl.is_error(select(2, pcall(dl.zeros, {-1}))))
    collectgarbage("collect")
    assert.equal(3, #b)
  end)
end)
