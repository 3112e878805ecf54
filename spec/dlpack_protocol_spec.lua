-- dlpack_protocol_spec.lua -- the DLPack protocol: __dlpack and __dlpack_device.
--
-- The Lua twin of Python's __dlpack__ / __dlpack_device__:
--   a:__dlpack(opts)      a:to_dlpack(opts) under the protocol's rule for
--                         max_version: a consumer that names none gets a
--                         legacy capsule (the Python array API's __dlpack__
--                         does the same), while a:to_dlpack() without it is
--                         versioned
--   a:__dlpack_device()   returns device_type, device_id (DLPack numbering: cpu is 1, 0)
--
-- dl.from_dlpack(x) accepts any PRODUCER: a value with a __dlpack method
-- (a dlbridge array, or any table of yours). It asks for a versioned capsule
-- first, calling x:__dlpack{max_version = {1, 3}}. If the producer rejects
-- that call with a plain Lua error (an older producer that takes no options),
-- it calls x:__dlpack() once more, without options, and takes the legacy
-- capsule. A dlbridge.Error from the producer is raised as is, with no
-- retry; a plain error from the retry too becomes ARGUMENT, with the
-- producer's own error in err.cause; a producer returning anything but a
-- capsule raises ARGUMENT. For a dlbridge array, dl.from_dlpack(a) does what
-- a:__dlpack{max_version = {1, 3}} would (a versioned, zero-copy export)
-- without the detour.
--
-- dl.from_dlpack(x, {copy = c, device = d}) passes both on, as the Python
-- array API's from_dlpack passes copy and dl_device to __dlpack__: the
-- first call is x:__dlpack{max_version = {1, 3}, copy = c, dl_device =
-- {device_type, device_id}} (each only when given; dl_device is d in
-- DLPack's numbering, {1, 0} for "cpu"; without opts.stream the stream is
-- dlbridge's queue on d). Then:
--   * a producer that does not know copy or dl_device rejects them with a
--     plain Lua error (Python's TypeError): it is asked again with
--     max_version only, and dlbridge makes the copy or the move itself;
--   * a producer that cannot put the tensor on dl_device raises a
--     dlbridge.Error UNSUPPORTED: asked again without it, and dlbridge moves
--     the tensor;
--   * any other dlbridge.Error is the producer's refusal (Python's
--     BufferError) and is raised as is: COPY_REQUIRED when copy = false
--     cannot be met;
--   * a tensor that says it is a copy (IS_COPIED) is one: copy = true takes
--     it as it is, copy = false raises COPY_REQUIRED. A tensor that does not
--     say so (the producer ignored copy = true, or a legacy capsule) is
--     copied by dlbridge; one that is not on d is moved there (a copy:
--     COPY_REQUIRED with copy = false). copy = true without device copies
--     where the tensor is.
local dl = require "dlbridge"
local support = require "support"

local failure = support.error_of
local code_of = support.code_of

-- A producer that wraps an array and records every opts it is called with
-- (calls[i] is false for a call without options).
local function recording_producer(inner)
  local producer = {calls = {}}
  function producer:__dlpack(opts)
    self.calls[#self.calls + 1] = opts or false
    return inner:to_dlpack(opts)
  end
  return producer
end

describe("a:__dlpack(opts)", function()
  it("without max_version returns a legacy capsule, as the protocol says", function()
    local a = dl.arange(3)
    local capsule = a:__dlpack()
    assert.is_false(capsule.versioned)
    assert.is_nil(capsule.version)
    assert.same({1, 0}, capsule.device)
    dl.from_dlpack(capsule)[1] = 9   -- zero copy, as to_dlpack's
    assert.equal(9, a[1])
    assert.is_false(a:__dlpack{copy = true}.versioned)  -- options without max_version too
  end)

  it("with max_version {1, x} returns a versioned capsule", function()
    local capsule = dl.arange(3):__dlpack{max_version = {1, 3}}
    assert.is_true(capsule.versioned)
    assert.same({1, 3}, capsule.version)
    assert.same({1, 1}, dl.arange(3):__dlpack{max_version = {1, 1}}.version)
  end)

  it("copies a read-only array for a legacy capsule (the legacy ABI has no read-only flag)", function()
    local ro = dl.array{1, 2}:view{1, 2}:expand{2, 2}
    local b = dl.from_dlpack(ro:__dlpack())
    assert.is_false(b.readonly)
    assert.same({{1, 2}, {1, 2}}, b:totable())
    assert.equal("COPY_REQUIRED", code_of(ro.__dlpack, ro, {copy = false}))
    assert.is_true(dl.from_dlpack(ro:__dlpack{max_version = {1, 3}}).readonly)
  end)

  it("takes the same options as a:to_dlpack", function()
    local a = dl.zeros(3)
    assert.is_false(a:__dlpack{max_version = {0, 8}}.versioned)
    local copy = dl.from_dlpack(a:__dlpack{copy = true})
    copy[1] = 1
    assert.equal(0, a[1])
    assert.equal("ARGUMENT", code_of(a.__dlpack, a, {stream = 1}))
    assert.equal("ARGUMENT", code_of(a.__dlpack, a, {nosuch = 1}))
  end)

  it("names itself Array:__dlpack in errors", function()
    local a = dl.zeros(3)
    a:delete()
    local err = failure(a.__dlpack, a)
    assert.equal("DELETED", err.code)
    assert.equal("Array:__dlpack", err.op)
  end)
end)

describe("a:__dlpack_device()", function()
  it("returns 1, 0 for a cpu array", function()
    local device_type, device_id = dl.zeros(3):__dlpack_device()
    assert.equal(1, device_type)
    assert.equal(0, device_id)
    assert.equal(2, select("#", dl.zeros(3):__dlpack_device()))
  end)

  it("agrees with the exported capsule's device", function()
    local a = dl.zeros{2, 2}
    assert.same({a:__dlpack_device()}, a:to_dlpack().device)
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros(3)
    a:delete()
    assert.equal("DELETED", code_of(a.__dlpack_device, a))
  end)
end)

describe("dl.from_dlpack(array)", function()
  it("gives a zero-copy view of the array, as a:__dlpack{max_version = {1, 3}} would", function()
    local a = dl.arange(6):view{2, 3}
    local b = dl.from_dlpack(a)
    assert.same(a:totable(), b:totable())
    b:set(2, 2, 40)
    assert.equal(40, a:get(2, 2))
  end)

  it("keeps the array's strides and read-only flag (it asks for a versioned capsule)", function()
    local t = dl.arange(6):view{2, 3}:transpose()
    assert.same(t.strides, dl.from_dlpack(t).strides)
    local ro = dl.array{1, 2}:view{2, 1}:expand{2, 3}
    assert.is_true(dl.from_dlpack(ro).readonly)
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros(3)
    a:delete()
    assert.equal("DELETED", code_of(dl.from_dlpack, a))
  end)

  it("takes opts.copy = true as for a capsule", function()
    local a = dl.zeros(3)
    local b = dl.from_dlpack(a, {copy = true})
    b[1] = 1
    assert.equal(0, a[1])
  end)
end)

describe("any table with a __dlpack method", function()
  it("works as a producer", function()
    local inner = dl.arange(4)
    local b = dl.from_dlpack(recording_producer(inner))
    assert.same({0, 1, 2, 3}, b:totable())
    b[2] = 10
    assert.equal(10, inner[2])
  end)

  it("is asked for a versioned capsule first: opts.max_version = {1, 3}", function()
    local producer = recording_producer(dl.zeros(2))
    dl.from_dlpack(producer)
    assert.equal(1, #producer.calls)
    assert.same({1, 3}, producer.calls[1].max_version)
  end)

  it("may hand back a legacy capsule even when asked for versioned", function()
    local inner = dl.arange(3)
    local producer = {}
    function producer:__dlpack() return inner:to_dlpack{max_version = {0, 8}} end
    local b = dl.from_dlpack(producer)
    assert.same({0, 1, 2}, b:totable())
  end)

  it("gets a second call without options when it rejects the options with a Lua error", function()
    -- an older producer that takes no options (legacy DLPack only)
    local inner = dl.arange(3)
    local calls = {}
    local old = {}
    function old:__dlpack(opts)
      calls[#calls + 1] = opts or false
      if opts ~= nil then error("__dlpack takes no options") end
      return inner:to_dlpack{max_version = {0, 8}}
    end
    local b = dl.from_dlpack(old)
    assert.same({0, 1, 2}, b:totable())
    assert.equal(2, #calls)
    assert.same({1, 3}, calls[1].max_version)
    assert.is_false(calls[2])  -- the second call had no options
  end)

  it("raises ARGUMENT when the retry fails too, with the producer's error in err.cause", function()
    local calls = 0
    local broken = {}
    local second = {"the second failure"}
    function broken:__dlpack()
      calls = calls + 1
      error(calls == 1 and "first" or second)
    end
    local ok, err = pcall(dl.from_dlpack, broken)
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.equal("dl.from_dlpack", err.op)
    assert.equal(second, err.cause)
    assert.equal(2, calls)
  end)

  it("raising a dlbridge.Error is reported as is, with no retry", function()
    local inner = dl.zeros(3)
    inner:delete()
    local producer = recording_producer(inner)
    local ok, err = pcall(dl.from_dlpack, producer)
    assert.is_false(ok)
    assert.equal("DELETED", err.code)
    assert.equal("Array:to_dlpack", err.op)
    assert.equal(1, #producer.calls)
  end)

  it("returning something that is not a capsule raises ARGUMENT", function()
    for _, result in ipairs{42, "capsule", {}, dl.zeros(2)} do
      local producer = {__dlpack = function() return result end}
      local ok, err = pcall(dl.from_dlpack, producer)
      assert.is_false(ok)
      assert.equal("ARGUMENT", err.code, type(result))
      assert.equal("dl.from_dlpack", err.op)
    end
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, {__dlpack = function() end}))
  end)

  it("returning a consumed capsule raises CAPSULE_CONSUMED", function()
    local capsule = dl.zeros(2):to_dlpack()
    dl.from_dlpack(capsule)
    assert.equal("CAPSULE_CONSUMED",
                 code_of(dl.from_dlpack, {__dlpack = function() return capsule end}))
  end)

  it("a __dlpack that is not a function raises ARGUMENT", function()
    local ok, err = pcall(dl.from_dlpack, {__dlpack = 5})
    assert.is_false(ok)
    assert.is_true(dl.is_error(err), "expected a dlbridge.Error, got " .. tostring(err))
    assert.equal("ARGUMENT", err.code)
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, {__dlpack = "to_dlpack"}))
  end)

  it("gets a versioned capsule from an array's __dlpack (the read-only flag survives)", function()
    local ro = dl.array{1, 2}:view{1, 2}:expand{3, 2}
    local producer = {__dlpack = function(_, opts) return ro:__dlpack(opts) end}
    local b = dl.from_dlpack(producer)
    assert.is_true(b.readonly)
    assert.same({0, 1}, b.strides)   -- the view itself, not a copy
  end)

  it("works through a metatable (__index), like a class instance", function()
    local Wrapper = {}
    Wrapper.__index = Wrapper
    function Wrapper:__dlpack(opts) return self.array:to_dlpack(opts) end
    local w = setmetatable({array = dl.arange(2)}, Wrapper)
    assert.same({0, 1}, dl.from_dlpack(w):totable())
  end)
end)

describe("dl.from_dlpack(producer, {copy = ..., device = ...})", function()
  local tb = require "testbackend"
  local ENGINE = "engine_protocol"   -- exportable, DLPack device type 12 (kDLExtDev)
  local QUEUED = "qgpu_protocol"     -- a device with a queue, device type 16
  if not support.registered(ENGINE) then tb.register{name = ENGINE, exportable = true} end
  if not support.registered(QUEUED) then
    tb.register_queued{name = QUEUED, devices = 1, max_delay_us = 10, device_type = 16}
  end

  -- recording_producer(a) follows the 2023.12 protocol: it hands over
  -- a:to_dlpack(opts), which takes copy and dl_device.
  local wrap = recording_producer

  -- An older producer: it knows max_version and stream, and rejects any other key
  -- with a plain Lua error (Python raises TypeError for an unknown keyword).
  local function older(a)
    local producer = {calls = {}}
    function producer:__dlpack(opts)
      self.calls[#self.calls + 1] = opts or false
      for k in pairs(opts or {}) do
        if k ~= "max_version" and k ~= "stream" then
          error("__dlpack() got an unexpected keyword argument '" .. k .. "'")
        end
      end
      return a:__dlpack(opts)
    end
    return producer
  end

  it("passes opts.copy and opts.device on to the producer as copy and dl_device", function()
    local producer = wrap(dl.arange(3))
    dl.from_dlpack(producer, {copy = true, device = "cpu"})
    assert.equal(1, #producer.calls)
    assert.same({1, 3}, producer.calls[1].max_version)
    assert.is_true(producer.calls[1].copy)
    assert.same({1, 0}, producer.calls[1].dl_device)   -- "cpu" in DLPack's numbering
    dl.from_dlpack(producer, {copy = false})
    assert.is_false(producer.calls[2].copy)
    assert.is_nil(producer.calls[2].dl_device)
    dl.from_dlpack(producer, {device = ENGINE})
    assert.same({12, 0}, producer.calls[3].dl_device)
    assert.is_nil(producer.calls[3].copy)
  end)

  it("passes neither when opts names neither", function()
    local producer = wrap(dl.arange(3))
    dl.from_dlpack(producer)
    dl.from_dlpack(producer, {})
    for _, opts in ipairs(producer.calls) do
      assert.is_nil(opts.copy)
      assert.is_nil(opts.dl_device)
      assert.is_nil(opts.stream)     -- a cpu producer: no stream
    end
  end)

  it("copy = true: the producer's copy is the result, not copied again", function()
    local inner = dl.arange(4, {device = ENGINE})
    local before = tb.stats(ENGINE).allocations
    local b = dl.from_dlpack(wrap(inner), {copy = true})
    assert.equal(1, tb.stats(ENGINE).allocations - before)  -- the producer's copy, only
    assert.equal(ENGINE .. ":0", b.device)                  -- where the producer is
    b[1] = 9
    assert.equal(0, inner[1])
  end)

  it("copy = true gives a writable array, also from a read-only producer", function()
    local inner = dl.arange(3)
    local broadcast = {__dlpack = function(_, opts)
      return inner:view{3, 1}:expand{3, 2}:__dlpack(opts)   -- READ_ONLY unless copied
    end}
    assert.is_true(dl.from_dlpack(broadcast).readonly)
    local b = dl.from_dlpack(broadcast, {copy = true})
    assert.is_false(b.readonly)
    b:set(1, 1, 9)
    assert.same({{9, 0}, {1, 1}, {2, 2}}, b:totable())
  end)

  it("copy = true: a producer that ignores it (no IS_COPIED) is copied by dlbridge", function()
    local inner = dl.arange(3)
    local careless = {__dlpack = function(_, opts) return inner:__dlpack{max_version = opts.max_version} end}
    local b = dl.from_dlpack(careless, {copy = true})
    b[1] = 9
    assert.equal(0, inner[1])
  end)

  it("copy = false: the producer's refusal (COPY_REQUIRED) is raised as is", function()
    local producer = wrap(dl.arange(3))
    local err = failure(dl.from_dlpack, producer, {device = ENGINE, copy = false})
    assert.equal("COPY_REQUIRED", err.code)
    assert.equal("Array:to_dlpack", err.op)  -- the producer's own error
    assert.equal(1, #producer.calls)         -- no retry
  end)

  it("copy = false: a producer that hands over a copy anyway raises COPY_REQUIRED", function()
    local inner = dl.arange(3)
    local copying = {__dlpack = function(_, opts)
      return inner:__dlpack{max_version = opts.max_version, copy = true}  -- IS_COPIED
    end}
    local err = failure(dl.from_dlpack, copying, {copy = false})
    assert.equal("COPY_REQUIRED", err.code)
    assert.equal("dl.from_dlpack", err.op)
  end)

  it("copy = false: no copy when none is needed", function()
    local inner = dl.arange(3)
    local b = dl.from_dlpack(wrap(inner), {copy = false, device = "cpu"})
    b[1] = 9
    assert.equal(9, inner[1])
  end)

  it("an older producer that rejects copy or dl_device is asked again with max_version only", function()
    local inner = dl.arange(3)
    local producer = older(inner)
    local b = dl.from_dlpack(producer, {copy = true})
    assert.equal(2, #producer.calls)
    assert.is_true(producer.calls[1].copy)
    assert.same({max_version = {1, 3}}, producer.calls[2])
    b[1] = 9                         -- dlbridge made the copy
    assert.equal(0, inner[1])
    local c = dl.from_dlpack(older(inner), {copy = false})
    c[1] = 7                         -- no copy needed: none made
    assert.equal(7, inner[1])
    local d = dl.from_dlpack(older(inner), {device = ENGINE})
    assert.equal(ENGINE .. ":0", d.device)   -- dlbridge moved it
    assert.same(inner:totable(), d:totable())
    assert.equal("COPY_REQUIRED", code_of(dl.from_dlpack, older(inner), {device = ENGINE, copy = false}))
  end)

  it("a producer that cannot put the tensor on dl_device (UNSUPPORTED) is asked again without it", function()
    local inner = dl.arange(3)                 -- a cpu array exports to the cpu only
    local producer = wrap(inner)
    local b = dl.from_dlpack(producer, {device = ENGINE})
    assert.equal(2, #producer.calls)
    assert.same({12, 0}, producer.calls[1].dl_device)
    assert.is_nil(producer.calls[2].dl_device)
    assert.equal(ENGINE .. ":0", b.device)     -- dlbridge moved it
    assert.same({0, 1, 2}, b:totable())
  end)

  it("a legacy producer still gets the call without options last; dlbridge copies", function()
    local inner = dl.arange(3)
    local calls = {}
    local legacy = {__dlpack = function(_, opts)
      calls[#calls + 1] = opts or false
      if opts ~= nil then error("__dlpack takes no options") end
      return inner:__dlpack()
    end}
    local b = dl.from_dlpack(legacy, {copy = true})
    assert.equal(3, #calls)
    assert.is_true(calls[1].copy)
    assert.is_nil(calls[2].copy)
    assert.is_false(calls[3])
    b[1] = 9                         -- a legacy capsule cannot say it is a copy: copied
    assert.equal(0, inner[1])
  end)

  it("with opts.device and no opts.stream, the stream is dlbridge's queue on that device", function()
    local producer = wrap(dl.arange(3))
    local b = dl.from_dlpack(producer, {device = QUEUED})
    assert.same({16, 0}, producer.calls[1].dl_device)
    assert.equal(tb.device_queue(QUEUED, 0), producer.calls[1].stream)
    assert.is_nil(producer.calls[2].stream)   -- the cpu producer's own device has no queue
    assert.equal(QUEUED .. ":0", b.device)
    assert.same({0, 1, 2}, b:totable())
    dl.from_dlpack(producer, {device = QUEUED, stream = -1})
    assert.equal(-1, producer.calls[3].stream)  -- the caller's stream, as given
  end)
end)
