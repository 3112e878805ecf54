-- device_queues_spec.lua -- arrays on a device that works asynchronously.
--
-- A device backend (CUDA, an engine's GPU) runs dlbridge's work on a queue
-- per device, in order, and returns before the work is done. dlbridge keeps
-- track of what is pending on each array's memory, so that:
--   * reading an array (a:totable(), a:to("cpu"), a[i]) waits for its work;
--   * work on another device waits on the device, not on the host;
--   * a strided transfer, g:T():to("cpu"), is ONE call into the backend;
--   * a:to_dlpack{stream = s} makes the consumer's stream s wait for the
--     work on a (the host does not wait); stream = -1 asks for no ordering;
--   * dl.from_dlpack(x, {stream = s}) passes s to x's __dlpack; without it,
--     dlbridge's own queue on the producer's device;
--   * arithmetic on device arrays runs on the device (the backend's kernel
--     table); an operation the backend has no kernel for raises UNSUPPORTED
--     with a hint to device_put, and nothing is copied behind your back;
--   * foreign device memory (a producer's tensor, dlb_push_external) comes
--     in zero copy through the backend of its DLPack device type.
--
-- In these specs `testbackend` registers such a device from C
-- (tb.register_queued): host memory behind worker threads with a random
-- delay per operation, whose queued destinations hold POISON (0xA5 bytes)
-- until the work runs, so a missing wait reads poison, never stale bytes
-- that happen to be right. tb.pause holds a device's queue, tb.consumer
-- makes a consumer's stream, tb.read_later reads an exported tensor on a
-- consumer's stream.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"
local string_unpack = support.string_unpack -- string.unpack on every Lua (5.1 too)

local GPU = "qgpu_d1"         -- 2 devices, every kernel
local BARE = "qgpu_d1_bare"   -- no matmul and no cast kernels

if not support.registered(GPU) then
  tb.register_queued{name = GPU, devices = 2, max_delay_us = 50, seed = 7}
end
if not support.registered(BARE) then
  tb.register_queued{name = BARE, devices = 1, max_delay_us = 20, omit = "matmul,cast"}
end

local POISON = string.char(0xA5)

-- The change in tb.queued_stats(name) over f().
local function counts(name, f)
  local before = tb.queued_stats(name)
  f()
  local after, d = tb.queued_stats(name), {}
  for k, v in pairs(after) do d[k] = v - before[k] end
  return d
end

-- A 100 x 100 float32 matrix 0, 1, 2, ... on device.
local function grid(device)
  return dl.arange(0, 10000, {dtype = "float32", device = device}):view{100, 100}
end

local function doubles(bytes)
  local t = {}
  for k = 1, #bytes / 8 do t[k] = string_unpack("<d", bytes, 8 * k - 7) end
  return t
end

describe("transfers from a device", function()
  it("move a transposed 100 x 100 matrix to the host in one backend call", function()
    local g = grid(GPU)
    local host
    local d = counts(GPU, function() host = g:T():to("cpu") end)
    assert.equal(1, d.copy_strided)
    assert.equal(0, d.to_host)
    assert.same({0, 100, 200}, {host[1][1], host[1][2], host[1][3]})
    assert.equal(9999, host[100][100])
  end)

  it("make a strided view contiguous on the device itself", function()
    local g = grid(GPU)
    local c
    local d = counts(GPU, function() c = g:T():contiguous() end)
    assert.equal(GPU .. ":0", c.device)
    assert.equal(1, d.cast)
    assert.equal(0, d.to_host + d.from_host)
    assert.equal(100, c[1][2])
  end)

  it("wait for the work queued on the array, whatever the delays", function()
    for _ = 1, 20 do
      local a = dl.arange(1, 65, {dtype = "float64", device = GPU})
      local b = (a * 2):to(GPU .. ":1") + 1 -- queued on device 0, then device 1
      assert.equal(3, b[1])
      assert.equal(129, b[64])
    end
  end)
end)

describe("arithmetic on device arrays", function()
  it("runs on the device's worker, in queue order", function()
    local a = dl.array({1, 2, 3, 4}, {dtype = "float64", device = GPU})
    local s, m, zeros
    local d = counts(GPU, function()
      s = (a + a):sum()
      m = a:view{2, 2}:matmul(a:view{2, 2}) -- queued: runs after the sum
      a:fill(0)                              -- queued: runs after the product read a
      m, zeros = m:totable(), a:totable()    -- reading waits for both
    end)
    assert.equal(20, s)
    assert.same({{7, 10}, {15, 22}}, m)
    assert.same({0, 0, 0, 0}, zeros)
    assert.equal(1, d.elementwise)
    assert.equal(1, d.matmul)
    assert.equal(1, d.fill)
    assert.equal(4, d.ran_on_worker)    -- add, sum, matmul, fill
  end)

  it("raises UNSUPPORTED where the backend has no kernel, and copies nothing", function()
    local a = dl.ones({2, 2}, {dtype = "float64", device = BARE})
    local err = support.expect_code("UNSUPPORTED", function() return a:matmul(a) end)
    assert.matches("device_put", err.hint)
    -- What to do instead: move the operands where a kernel exists.
    assert.same({{2, 2}, {2, 2}}, a:to("cpu"):matmul(a:to("cpu")):totable())
  end)
end)

-- Holds device 0's queue for the rest of the test (released however the
-- test ends: a held queue would stall every later test). Garbage is
-- collected first: memory freed while a queue waits is retired behind that
-- queue's work, one more operation on it, and only this test's operations
-- should be pending there.
local function hold_device_0()
  finally(function() tb.pause(GPU, 0, false) end)
  collectgarbage()
  collectgarbage()
  tb.pause(GPU, 0, true)
end

describe("a:to_dlpack{stream = s} from a device", function()
  it("makes the consumer's stream wait for the array's work; the host does not wait", function()
    local a = dl.array({1, 2, 3}, {dtype = "float64", device = GPU})
    local stream = tb.consumer(GPU, 0)
    hold_device_0()                         -- nothing runs on device 0 for now
    local b = a + 1                         -- queued
    local ticket
    local d = counts(GPU, function()
      ticket = tb.read_later(GPU, b:to_dlpack{stream = stream}, stream)
    end)
    assert.equal(1, d.stream_wait)
    assert.equal(0, d.host_blocks)          -- to_dlpack returned with the device held
    assert.equal(2, tb.pending(GPU, stream)) -- the consumer waits, then reads
    tb.pause(GPU, 0, false)
    assert.same({2, 3, 4}, doubles(tb.collect(GPU, ticket)))
  end)

  it("with stream = -1 orders nothing: a consumer that reads at once sees poison", function()
    local a = dl.array({1, 2, 3}, {dtype = "float64", device = GPU})
    local stream = tb.consumer(GPU, 0)
    hold_device_0()
    local b = a + 1
    local bytes = tb.collect(GPU, tb.read_later(GPU, b:to_dlpack{stream = -1}, stream))
    tb.pause(GPU, 0, false)
    assert.equal(POISON:rep(24), bytes)     -- what a missing wait reads
    assert.same({2, 3, 4}, b:totable())     -- dlbridge itself waits
  end)

  it("refuses a value that is no stream of the device (0, or an unknown handle)", function()
    local a = dl.zeros(3, {device = GPU})
    local err = support.expect_code("ARGUMENT", function() return a:to_dlpack{stream = 0} end)
    assert.matches("%-1", err.hint)
    support.expect_code("ARGUMENT", function() return a:to_dlpack{stream = 12345} end)
  end)
end)

describe("foreign device memory", function()
  it("comes in zero copy through dlb_push_external", function()
    collectgarbage() -- foreign arrays of earlier tests are forgotten before the count
    collectgarbage()
    local f
    local d = counts(GPU, function() f = tb.foreign(GPU, 1, {10, 20, 30, 40}, 2) end)
    assert.equal(1, d.adopt)
    assert.equal(GPU .. ":1", f.device)
    assert.same({20, 30, 40}, f:totable())
    assert.same({21, 31, 41}, (f + 1):totable())
    f = nil
    d = counts(GPU, function() collectgarbage() collectgarbage() end)
    assert.equal(1, d.forget)
  end)

  it("comes in through dl.from_dlpack, the stream passed on to the producer", function()
    local seen
    local producer = {
      __dlpack = function(_, opts)
        seen = opts.stream
        return tb.foreign_capsule(GPU, 0, {5, 6})
      end,
      __dlpack_device = function() return 12, 0 end,
    }
    local x = dl.from_dlpack(producer, {stream = 77})
    assert.equal(77, seen)
    assert.same({5, 6}, x:totable())
    -- no stream given: the producer orders its work before dlbridge's queue
    dl.from_dlpack(producer)
    assert.equal(tb.device_queue(GPU, 0), seen)
  end)
end)

describe("the device backend's own checks", function()
  it("saw no bad handle, range, queue or race in everything above", function()
    collectgarbage()
    local s = tb.queued_stats(GPU)
    assert.equal(0, s.violations)
    assert.equal(0, s.races)
    assert.is_true(s.poisoned > 0)
  end)
end)
