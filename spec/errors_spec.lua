-- errors_spec.lua -- how dlbridge reports failures.
--
-- Every failure raises an error OBJECT, never a plain string: a table whose
-- metatable is dlbridge.Error (also reachable as dl.Error), with
--   err.code     a stable code string; dl.E lists them (dl.E.SHAPE == "SHAPE")
--   err.message  what went wrong, for people
--   err.op       the API call that failed ("dl.zeros", "Array:view", ...)
--   err.hint     what to do next (always a string)
--   err.where    "file:line: " of the Lua code that made the call ("" from C)
-- tostring(err) reads "file:line: dlbridge: CODE: message (hint: ...)", led
-- by err.where like Lua's own error messages, so an uncaught error printed by
-- the lua interpreter says where it happened (spec/error_printing_spec.lua).
--
-- Catch errors with pcall and branch on err.code (or err:is(code)); use
-- dl.try / dl.safe for the "nil, err" style; use xpcall(f, dl.traceback) to
-- keep the object and add a stack traceback.

local dl = require "dlbridge"
local support = require "support"

-- A function defined here, so that err.where points into this file. (It does
-- not end in a tail call: `return dl.zeros{-1}` would leave no frame to name.)
local function make_bad_shape()
  local a = dl.zeros{-1}
  return a
end

local failure = support.error_of

describe("an error object", function()
  it("is a table whose metatable is dl.Error (named dlbridge.Error)", function()
    local ok, err = pcall(dl.zeros, {-1})
    assert.is_false(ok)
    assert.equal("table", type(err))
    assert.equal(dl.Error, getmetatable(err))
    assert.equal("dlbridge.Error", getmetatable(err).__name)
  end)

  it("has a code, a message, the failing op and a hint, all strings", function()
    local err = failure(dl.zeros, {-1})
    assert.equal("SHAPE", err.code)
    assert.equal("string", type(err.message))
    assert.is_true(#err.message > 0)
    assert.equal("dl.zeros", err.op)
    assert.equal("string", type(err.hint))
    assert.is_true(#err.hint > 0)
  end)

  it("names methods as Array:name in op", function()
    local a = dl.zeros{2, 3}
    local err = failure(a.view, a, {7})
    assert.equal("Array:view", err.op)
    err = failure(function() return a[0] end)
    assert.equal("Array:__index", err.op)
  end)

  it("records where the calling Lua function made the call in err.where", function()
    local ok, err = pcall(make_bad_shape)
    assert.is_false(ok)
    assert.matches("errors_spec.lua:%d+:", err.where)
  end)

  it("records where for methods and indexing too", function()
    local ok, err = pcall(function()
      local a = dl.zeros(2)
      local x = a[0]
      return x
    end)
    assert.is_false(ok)
    assert.matches("errors_spec.lua:%d+:", err.where)
  end)

  it("records where for every method of a deleted array", function()
    for _, name in ipairs{"copy", "contiguous", "totable", "tobytes"} do
      local ok, err = pcall(function()
        local a = dl.zeros(2)
        a:delete()
        local result = a[name](a)
        return result
      end)
      assert.is_false(ok)
      assert.equal("DELETED", err.code)
      assert.matches("errors_spec.lua:%d+:", err.where, "Array:" .. name)
    end
  end)

  it("always carries a hint, for every code it can raise", function()
    local a = dl.zeros(2)
    local samples = {
      failure(dl.zeros, {-1}),
      failure(dl.zeros, 2, {dtype = "float"}),
      failure(dl.zeros, 2, {device = "gpu"}),
      failure(dl.full, 2, 300, {dtype = "int8"}),
      failure(a.get, a, 3),
      failure(a.view, 42, {2}),
    }
    for _, err in ipairs(samples) do
      assert.equal("string", type(err.hint), err.code)
      assert.is_true(#err.hint > 0, err.code)
    end
  end)
end)

describe("tostring(err)", function()
  it("reads 'dlbridge: CODE: message (hint: ...)' for a call made from C (pcall)", function()
    local err = failure(dl.zeros, {-1}) -- pcall(dl.zeros, {-1}): no Lua line made the call
    assert.equal("", err.where)
    assert.equal("dlbridge: SHAPE: shape entry 1 is negative (-1) "
      .. "(hint: a shape is a table of non-negative integers, {2, 3}, or the same integers as "
      .. "separate arguments, dl.zeros(2, 3))", tostring(err))
    assert.equal("dlbridge: " .. err.code .. ": " .. err.message .. " (hint: " .. err.hint .. ")",
      tostring(err))
  end)

  it("leads with err.where, 'file:line: ', when Lua code made the call", function()
    local ok, err = pcall(make_bad_shape)
    assert.is_false(ok)
    assert.matches("^errors_spec%.lua:%d+: $", err.where:match("[^/]*$"))
    assert.equal(err.where .. "dlbridge: SHAPE: " .. err.message .. " (hint: " .. err.hint .. ")",
      tostring(err))
  end)

  it("is the form to concatenate: \"failed: \" .. tostring(err)", function()
    local err = failure(dl.zeros, {-1})
    assert.equal("failed: dlbridge: SHAPE: " .. err.message .. " (hint: " .. err.hint .. ")",
      "failed: " .. tostring(err))
    -- The error object itself, a table, does not concatenate (Lua's own error).
    assert.is_false(pcall(function() return "failed: " .. err end))
    assert.is_false(pcall(function() return err .. " (retrying)" end))
  end)
end)

describe("err:is(code)", function()
  it("tells whether the error has that code", function()
    local err = failure(dl.zeros, {-1})
    assert.is_true(err:is("SHAPE"))
    assert.is_true(err:is(dl.E.SHAPE))
    assert.is_false(err:is("VALUE"))
    assert.is_false(err:is("shape"))
  end)

  it("never matches when called without a code", function()
    local err = failure(dl.zeros, {-1})
    assert.is_false(err:is(nil))
    -- Called with no argument at all: either false or an ARGUMENT error,
    -- but never a match.
    local ok, matched = pcall(err.is, err)
    if ok then
      assert.is_false(matched)
    else
      assert.equal("ARGUMENT", matched.code)
    end
  end)
end)

describe("dl.E", function()
  local codes = {
    "BACKEND_INCOMPATIBLE", "DELETED", "CAPSULE_CONSUMED", "UNKNOWN_DEVICE",
    "DEVICE_UNAVAILABLE", "DTYPE", "SHAPE", "INDEX", "VALUE", "COPY_REQUIRED",
    "READ_ONLY", "DLPACK_VERSION", "DLPACK_INVALID", "UNSUPPORTED", "OUT_OF_MEMORY",
    "BACKEND_FAILURE", "ARGUMENT", "IO", "FORMAT", "INTERRUPTED", "LINALG",
  }

  it("names every error code: dl.E.SHAPE == 'SHAPE'", function()
    for _, code in ipairs(codes) do
      assert.equal(code, dl.E[code])
    end
  end)

  it("holds exactly these 21 codes", function()
    -- dl.E is read-only (a userdata stand-in): dl.pairs walks it on every Lua
    -- (pairs too on Lua 5.2 and later: spec/lua53/errors_spec.lua)
    local n = 0
    for name, value in dl.pairs(dl.E) do
      n = n + 1
      assert.equal(name, value)
    end
    assert.equal(#codes, n)
    assert.is_nil(dl.E.OK)
  end)
end)

describe("dl.is_error(v)", function()
  it("is true for dlbridge errors", function()
    assert.is_true(dl.is_error(failure(dl.zeros, {-1})))
  end)

  it("is false for strings, plain tables, other metatables and nil", function()
    assert.is_false(dl.is_error("dlbridge: SHAPE: bad"))
    assert.is_false(dl.is_error({code = "SHAPE", message = "bad"}))
    assert.is_false(dl.is_error(setmetatable({code = "SHAPE"}, {})))
    assert.is_false(dl.is_error(nil))
    assert.is_false(dl.is_error(42))
    assert.is_false(dl.is_error(dl.zeros(1)))
  end)
end)

describe("catching errors", function()
  it("pcall returns the error object itself", function()
    local ok, err = pcall(dl.zeros, {-1})
    assert.is_false(ok)
    assert.is_true(dl.is_error(err))
    assert.equal("SHAPE", err.code)
  end)

  it("coroutine.resume returns the error object itself", function()
    local co = coroutine.create(function()
      local a = dl.zeros{-1}
      return a
    end)
    local ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.is_true(dl.is_error(err))
    assert.equal("SHAPE", err.code)
    assert.equal("dead", coroutine.status(co))
  end)

  it("xpcall(f, dl.traceback) keeps the object and adds err.traceback", function()
    local ok, err = xpcall(make_bad_shape, dl.traceback)
    assert.is_false(ok)
    assert.is_true(dl.is_error(err))
    assert.equal("SHAPE", err.code)
    assert.equal("string", type(err.traceback))
    assert.matches("stack traceback:", err.traceback)
    assert.matches("errors_spec.lua:%d+", err.traceback)
  end)

  it("dl.traceback turns other errors into debug.traceback text", function()
    local ok, msg = xpcall(function() error("boom") end, dl.traceback)
    assert.is_false(ok)
    assert.equal("string", type(msg))
    assert.matches("boom", msg)
    assert.matches("stack traceback:", msg)
  end)
end)

describe("dl.try(f, ...)", function()
  it("returns all of f's results when f succeeds", function()
    local a, b, c = dl.try(function(x, y) return x + y, "two", nil end, 1, 2)
    assert.equal(3, a)
    assert.equal("two", b)
    assert.is_nil(c)
    local arr = dl.try(dl.zeros, {2})
    assert.is_true(dl.is_array(arr))
  end)

  it("returns nil, err for a dlbridge error", function()
    local a, err = dl.try(dl.zeros, {-1})
    assert.is_nil(a)
    assert.is_true(dl.is_error(err))
    assert.equal("SHAPE", err.code)
  end)

  it("re-raises other errors unchanged", function()
    local ok, msg = pcall(dl.try, function() error("boom") end)
    assert.is_false(ok)
    assert.matches("errors_spec.lua:%d+: boom$", msg)

    local thrown = {}
    local ok2, got = pcall(dl.try, function() error(thrown) end)
    assert.is_false(ok2)
    assert.equal(thrown, got) -- the very same table
  end)
end)

describe("dl.safe", function()
  it("gives every function in nil, err form", function()
    local a, err = dl.safe.zeros{-1}
    assert.is_nil(a)
    assert.equal("SHAPE", err.code)
  end)

  it("returns the result when the call succeeds", function()
    local a, err = dl.safe.zeros{2}
    assert.is_nil(err)
    assert.is_true(dl.is_array(a))
    assert.same({2}, a.shape)
  end)

  it("has no entry for names that are not functions", function()
    assert.is_nil(dl.safe.no_such_function)
    assert.is_nil(dl.safe.E)
  end)
end)

describe("what typically raises each code", function()
  it("DELETED: using an array after a:delete()", function()
    local a = dl.zeros(3)
    a:delete()
    local err = failure(a.copy, a)
    assert.equal("DELETED", err.code)
    assert.equal(dl.E.DELETED, err.code)
  end)

  it("UNKNOWN_DEVICE: a device name no backend has", function()
    assert.equal("UNKNOWN_DEVICE", failure(dl.zeros, 2, {device = "gpu"}).code)
    assert.equal("UNKNOWN_DEVICE", failure(dl.zeros, 2, {device = "cpu:1"}).code)
  end)

  it("DTYPE: an unknown dtype name", function()
    assert.equal("DTYPE", failure(dl.zeros, 2, {dtype = "float"}).code)
  end)

  it("SHAPE: a negative extent, or mismatched element counts", function()
    assert.equal("SHAPE", failure(dl.zeros, {-1}).code)
    local a = dl.zeros(6)
    assert.equal("SHAPE", failure(a.reshape, a, {4}).code)
  end)

  it("INDEX: an index out of range (indices are 1-based)", function()
    local a = dl.zeros(3)
    assert.equal("INDEX", failure(a.get, a, 4).code)
    assert.equal("INDEX", failure(function() a[4] = 1 end).code)
    assert.equal("INDEX", failure(function() return a[0] end).code)
    assert.is_nil(a[4]) -- reading a[i] past the end is nil, as for a table (ipairs stops there)
  end)

  it("VALUE: a value the dtype cannot hold", function()
    assert.equal("VALUE", failure(dl.full, 2, 300, {dtype = "int8"}).code)
    assert.equal("VALUE", failure(dl.array, {1.5}, {dtype = "int32"}).code)
  end)

  it("READ_ONLY: writing to an expand view (one element stands for many)", function()
    local e = dl.zeros(1):expand{4}
    assert.is_true(e.readonly)
    assert.equal("READ_ONLY", failure(function() e[2] = 1 end).code)
    assert.equal("READ_ONLY", failure(e.fill, e, 1).code)
  end)

  it("COPY_REQUIRED: a:view of a transposed array (reshape would copy)", function()
    local t = dl.zeros{2, 3}:transpose()
    assert.equal("COPY_REQUIRED", failure(t.view, t, {6}).code)
    assert.same({6}, t:reshape{6}.shape) -- reshape copies instead
  end)

  it("OUT_OF_MEMORY: an allocation the system refuses", function()
    -- 2^47 float64 elements ask for 2^50 bytes (one PiB).
    local err = failure(dl.zeros, {2 ^ 47})
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.equal("cpu", err.backend)
  end)

  it("ARGUMENT: a wrong argument type, e.g. a method called on a non-array", function()
    local a = dl.zeros(2)
    assert.equal("ARGUMENT", failure(a.copy, 42).code)
    assert.equal("ARGUMENT", failure(dl.zeros, "3").code)
    assert.equal("ARGUMENT", failure(dl.zeros, 2, {dtyp = "int8"}).code)
  end)

  it("IO: the system refuses a file operation, e.g. dl.load of a missing file", function()
    local err = failure(dl.load, "/no/such/dir/weights.npy")
    assert.equal("IO", err.code)
    assert.equal(2, err.status) -- the system's errno: ENOENT
  end)

  it("FORMAT: bytes that are not the file format, e.g. dl.fromnpy of garbage", function()
    assert.equal("FORMAT", failure(dl.fromnpy, "this is not a .npy file").code)
  end)
end)

describe("the validate-then-pcall pattern", function()
  -- Check what you can cheaply in Lua, call the library under pcall, and
  -- branch on the code. Codes are stable; messages are for people.
  local function load_pixels(width, height, bytes)
    if type(bytes) ~= "string" then
      return nil, "pixels must be a string"
    end
    local ok, result = pcall(dl.frombytes, bytes, "uint8", {height, width, 4})
    if ok then return result end
    if result.code == dl.E.SHAPE then
      return nil, ("expected %d bytes for %dx%d RGBA, got %d"):format(width * height * 4,
        width, height, #bytes)
    end
    error(result, 0) -- anything else is not ours to handle: re-raise it unchanged
  end

  it("returns the array when the input is good", function()
    local img = assert(load_pixels(2, 1, ("\255"):rep(8)))
    assert.same({1, 2, 4}, img.shape)
    assert.equal(255, img:get(1, 2, 4))
  end)

  it("turns the expected failure into a friendly message", function()
    local img, msg = load_pixels(2, 2, ("\0"):rep(8))
    assert.is_nil(img)
    assert.equal("expected 16 bytes for 2x2 RGBA, got 8", msg)
  end)

  it("re-raises failures it does not expect, as the same error object", function()
    local ok, err = pcall(load_pixels, "2", 2, "") -- a string width: not a SHAPE problem
    assert.is_false(ok)
    assert.is_true(dl.is_error(err))
    assert.equal("ARGUMENT", err.code)
  end)
end)
