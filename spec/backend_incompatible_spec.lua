-- backend_incompatible_spec.lua -- exporting an array whose backend has no device pointer.
--
-- The story. A game engine registers its own backend from C
-- (dlb_register_backend) so that scripts can keep tensors in engine
-- resources. Those resources sit behind handles: the engine can copy them
-- to and from host memory, but it has no pointer a DLPack consumer could
-- read (its vtable has no export_pointer hook). A script prepares an array
-- there and hands it to an inference runtime through DLPack.
--
-- In JAX this ends in an opaque "This operation is implemented for a
-- PjRt-compatible backend only." In dlbridge it is a coded error that says
-- what happened and what to do:
--
--   local ok, err = pcall(a.to_dlpack, a)
--   -- err.code    "BACKEND_INCOMPATIBLE"
--   -- err.backend "engine_bi",  err.device "engine_bi:0",  err.op "Array:to_dlpack"
--   -- err.hint    move it first with dl.device_put(a, "cpu"), or export
--   --             with to_dlpack{fallback = "cpu"}
--
-- A script can check first: dl.backends() says exportable = false for such
-- a backend. It recovers in one of two ways, both copies into host memory:
--
--   local capsule = dl.device_put(a, "cpu"):to_dlpack()  -- keep the cpu copy too
--   local capsule = a:to_dlpack{fallback = "cpu"}         -- one line
--
-- In these specs the test module `testbackend` stands in for the engine's
-- backend; tb.register{name=, exportable=false} registers one without the
-- export hook, just as a host's C code would.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local ENGINE = "engine_bi"            -- handles only: no export hook
local PINNED = "engine_bi_pinned"     -- with the export hook: pinned host memory
local EXTDEV = "engine_bi_ext"        -- with the export hook: its own device type

local CPU, CUDA_HOST, EXT_DEV = 1, 3, 12  -- DLPack device types

local backend_info = support.backend_info

if not backend_info(ENGINE) then tb.register{name = ENGINE, exportable = false} end
if not backend_info(PINNED) then
  tb.register{name = PINNED, exportable = true, device_type = CUDA_HOST}
end
if not backend_info(EXTDEV) then tb.register{name = EXTDEV, exportable = true} end

-- An array the script prepared in engine memory.
local function engine_array()
  return dl.array({{1, 2, 3}, {4, 5, 6}}, {dtype = "float32", device = ENGINE})
end

describe("exporting from a backend without the export hook", function()
  it("raises BACKEND_INCOMPATIBLE", function()
    local a = engine_array()
    local ok, err = pcall(a.to_dlpack, a)
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
    assert.is_true(dl.is_error(err))
    assert.is_true(err:is(dl.E.BACKEND_INCOMPATIBLE))
  end)

  it("says which backend, which device and which call", function()
    local a = engine_array()
    local _, err = pcall(a.to_dlpack, a)
    assert.equal(ENGINE, err.backend)
    assert.equal(ENGINE .. ":0", err.device)
    assert.equal("Array:to_dlpack", err.op)
    assert.matches(ENGINE, err.message, 1, true)
  end)

  it("says what to do next in err.hint: both ways out", function()
    local a = engine_array()
    local _, err = pcall(a.to_dlpack, a)
    assert.matches('dl.device_put(a, "cpu")', err.hint, 1, true)
    assert.matches('fallback = "cpu"', err.hint, 1, true)
    -- and tostring(err) is what a log line shows
    assert.matches('^dlbridge: BACKEND_INCOMPATIBLE: .*fallback = "cpu"', tostring(err))
  end)

  it("raises the same under the protocol name, a:__dlpack", function()
    local a = engine_array()
    local ok, err = pcall(a.__dlpack, a, {max_version = {1, 3}})
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
    assert.equal("Array:__dlpack", err.op)
  end)

  it("raises the same from dl.from_dlpack(a) (the protocol)", function()
    local a = engine_array()
    local ok, err = pcall(dl.from_dlpack, a)
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
    assert.equal("dl.from_dlpack", err.op)
    assert.equal(ENGINE, err.backend)
  end)

  it("passes through a producer whose __dlpack hands over an engine array", function()
    local a = engine_array()
    local producer = {__dlpack = function(_, opts) return a:__dlpack(opts) end}
    local ok, err = pcall(dl.from_dlpack, producer)
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
    assert.equal(ENGINE, err.backend)
  end)

  it("raises it for legacy (0.x) requests and copy = false as well", function()
    local a = engine_array()
    local ok, err = pcall(a.to_dlpack, a, {max_version = {0, 8}})
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
    ok, err = pcall(a.to_dlpack, a, {copy = false})
    assert.is_false(ok)
    assert.equal("BACKEND_INCOMPATIBLE", err.code)
  end)

  it("leaves the array as it was", function()
    local a = engine_array()
    pcall(a.to_dlpack, a)
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
    a:set(1, 1, 10)
    assert.equal(10, a:get(1, 1))
  end)
end)

describe("checking first", function()
  it("dl.backends() reports the engine as not exportable, cpu as exportable", function()
    assert.is_false(backend_info(ENGINE).exportable)
    assert.is_true(backend_info("cpu").exportable)
    assert.is_true(backend_info(PINNED).exportable)
  end)

  it("a.backend finds the entry for an array", function()
    local a = engine_array()
    local function can_export(x) return backend_info(x.backend).exportable end
    assert.is_false(can_export(a))
    assert.is_true(can_export(dl.zeros(1)))
  end)

  it("a:__dlpack_device() gives the engine's DLPack device", function()
    local a = engine_array()
    local device_type, device_id = a:__dlpack_device()
    assert.equal(EXT_DEV, device_type)
    assert.equal(0, device_id)
  end)
end)

describe("recovering with dl.device_put(a, \"cpu\")", function()
  it("moves the array to host memory, which exports", function()
    local a = engine_array()
    local on_cpu = dl.device_put(a, "cpu")
    local capsule = on_cpu:to_dlpack()
    assert.same({CPU, 0}, capsule.device)
    local b = dl.from_dlpack(capsule)
    assert.same({{1, 2, 3}, {4, 5, 6}}, b:totable())
    assert.equal("float32", b.dtype)
  end)

  it("gives a cpu array that the consumer shares (the engine array is separate)", function()
    local a = engine_array()
    local on_cpu = a:to("cpu")
    local b = dl.from_dlpack(on_cpu:to_dlpack())
    b:set(1, 1, 100)
    assert.equal(100, on_cpu:get(1, 1))  -- the consumer sees the cpu array itself
    assert.equal(1, a:get(1, 1))         -- not the engine's memory
  end)
end)

describe('recovering in one line with a:to_dlpack{fallback = "cpu"}', function()
  it("exports a host copy", function()
    local a = engine_array()
    local capsule = a:to_dlpack{fallback = "cpu"}
    assert.same({CPU, 0}, capsule.device)
    assert.is_true(capsule.versioned)
    local b = dl.from_dlpack(capsule)
    assert.equal("cpu:0", b.device)
    assert.equal("float32", b.dtype)
    assert.same({{1, 2, 3}, {4, 5, 6}}, b:totable())
  end)

  it("is a copy: writes to the import do not change the engine array", function()
    local a = engine_array()
    local b = dl.from_dlpack(a:to_dlpack{fallback = "cpu"})
    b:set(2, 3, -1)
    assert.equal(6, a:get(2, 3))
    a:set(1, 1, 50)
    assert.equal(1, b:get(1, 1))
  end)

  it("copies a view with its values, in the view's shape", function()
    local a = engine_array()
    local b = dl.from_dlpack(a:transpose():to_dlpack{fallback = "cpu"})
    assert.same({{1, 4}, {2, 5}, {3, 6}}, b:totable())
  end)

  it("works for legacy (0.x) consumers too", function()
    local a = engine_array()
    local capsule = a:to_dlpack{fallback = "cpu", max_version = {0, 8}}
    assert.is_false(capsule.versioned)
    assert.same({{1, 2, 3}, {4, 5, 6}}, dl.from_dlpack(capsule):totable())
  end)

  it("raises COPY_REQUIRED with copy = false: the fallback is a copy", function()
    local a = engine_array()
    local ok, err = pcall(a.to_dlpack, a, {fallback = "cpu", copy = false})
    assert.is_false(ok)
    assert.equal("COPY_REQUIRED", err.code)
    assert.equal("Array:to_dlpack", err.op)
  end)

  it("changes nothing for an array that exports anyway (cpu): no copy", function()
    local c = dl.array{1, 2, 3}
    local b = dl.from_dlpack(c:to_dlpack{fallback = "cpu"})
    b[1] = 100
    assert.equal(100, c[1])
  end)

  it("accepts only \"cpu\" as the fallback", function()
    local a = engine_array()
    local ok, err = pcall(a.to_dlpack, a, {fallback = ENGINE})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
  end)
end)

describe("an engine registered with the export hook", function()
  it("exports its memory as is: no copy, no staging", function()
    local a = dl.array({{1, 2}, {3, 4}}, {device = PINNED})
    local before = tb.stats(PINNED)
    local capsule = a:to_dlpack()
    local b = dl.from_dlpack(capsule)
    local after = tb.stats(PINNED)
    assert.same({CUDA_HOST, 0}, capsule.device)
    assert.equal(before.allocations, after.allocations)
    assert.equal(before.to_host, after.to_host)
    assert.same({{1, 2}, {3, 4}}, b:totable())
    b:set(1, 1, 100)                -- the consumer writes into the engine's memory
    assert.equal(100, a:get(1, 1))
  end)

  it("dl.from_dlpack(a) works directly", function()
    local a = dl.array({5, 6, 7}, {dtype = "int16", device = PINNED})
    local b = dl.from_dlpack(a)
    assert.same({5, 6, 7}, b:totable())
    assert.equal("int16", b.dtype)
  end)

  it("hands out the engine's own device type, and dlbridge takes its own export back zero copy", function()
    local a = dl.array({1, 2}, {device = EXTDEV})
    local capsule = a:to_dlpack()   -- fine for a consumer that knows the engine
    assert.same({EXT_DEV, 0}, capsule.device)
    local b = dl.from_dlpack(capsule)
    assert.equal(EXTDEV .. ":0", b.device)   -- back on the engine: no copy
    b[1] = 10
    assert.equal(10, a[1])
    -- asking for the host instead copies it there
    assert.equal("cpu:0", dl.from_dlpack(a:to_dlpack(), {device = "cpu"}).device)
  end)
end)

describe("recipe: export whatever the backend, with pcall and err.code", function()
  -- Copy this into a script. It exports a as is where the backend allows it,
  -- and otherwise hands the consumer a host copy; other errors go up as
  -- they are.
  local function export_for_consumer(a, opts)
    local ok, capsule = pcall(a.to_dlpack, a, opts)
    if ok then return capsule end
    local err = capsule
    if dl.is_error(err) and err.code == "BACKEND_INCOMPATIBLE" then
      return dl.device_put(a, "cpu"):to_dlpack(opts)
    end
    error(err, 0)
  end

  it("exports an engine array through a host copy", function()
    local a = engine_array()
    local b = dl.from_dlpack(export_for_consumer(a))
    assert.same({{1, 2, 3}, {4, 5, 6}}, b:totable())
  end)

  it("exports a cpu array without a copy", function()
    local c = dl.array{1, 2, 3}
    local b = dl.from_dlpack(export_for_consumer(c))
    b[2] = 20
    assert.equal(20, c[2])
  end)

  it("lets other errors through unchanged", function()
    local a = engine_array()
    local ok, err = pcall(export_for_consumer, a, {max_version = "1.0"})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
  end)

  -- The same in the "nil, err" style of dl.try.
  local function export_or_fallback(a)
    local capsule, err = dl.try(a.to_dlpack, a)
    if capsule then return capsule end
    if err:is("BACKEND_INCOMPATIBLE") then return a:to_dlpack{fallback = "cpu"} end
    error(err, 0)
  end

  it("works the same with dl.try", function()
    local b = dl.from_dlpack(export_or_fallback(engine_array()))
    assert.same({{1, 2, 3}, {4, 5, 6}}, b:totable())
  end)
end)
