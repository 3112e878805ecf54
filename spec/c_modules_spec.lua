-- c_modules_spec.lua -- other Lua C modules take and make dlbridge arrays.
--
-- A C module that binds an inference runtime or an engine subsystem does not
-- link dlbridge: it includes dlbridge_exchange.h and finds, at run time, the
-- exchange table dlbridge publishes in the Lua registry (C function pointers:
-- export to DLPack, push a tensor or external memory as an array, borrow,
-- raise a coded error). examples/exchange_module/tensorstats.c is such a
-- module; from Lua it is used like any other:
--
--   local dl = require "dlbridge"
--   local stats = require "tensorstats"
--   stats.mean(a)        -- reads a (float32/float64, any layout) in place
--   stats.ramp(5)        -- an array whose memory the module owns
--
-- Errors the module raises through the table are dlbridge.Error objects.
local dl = require "dlbridge"
local stats = require "tensorstats"
local support = require "support"

describe("a C module using the exchange table", function()
  it("reads arrays in place, whatever their layout", function()
    local a = dl.arange(12, {dtype = "float32"}):view{3, 4}
    assert.equal(5.5, stats.mean(a))
    assert.equal(5.5, stats.mean(a:T():slice(2, -1, 1, -1)))
    assert.equal(4, stats.mean(a[2]:astype("float64") - 1.5))
  end)

  it("makes arrays over memory it owns, freed when Lua is done with them", function()
    local r = stats.ramp(5)
    assert.is_true(dl.is_array(r))
    assert.same({0, 1, 2, 3, 4}, r:totable())
    r[1] = 10  -- writable, in the module's memory
    assert.equal(4, stats.mean(r))
    local view = r:slice(1, 2, 3)
    r = nil
    collectgarbage()
    assert.same({1, 2}, view:totable())  -- the view still holds the memory
  end)

  it("exports through DLPack as a consumer does", function()
    assert.equal(100, stats.export_roundtrips(dl.zeros{4}, 100))
  end)

  it("raises dlbridge errors with codes", function()
    support.expect_code("DTYPE", stats.mean, dl.zeros({2}, {dtype = "int32"}))
    support.expect_code("ARGUMENT", stats.mean, "not an array")
    support.expect_code("SHAPE", stats.ramp, -1)
    local d = dl.zeros{2}
    d:delete()
    support.expect_code("DELETED", stats.mean, d)
  end)

  it("gives the module's own error a location and the op it names", function()
    local ok, err = pcall(stats.mean, dl.zeros({2}, {dtype = "int8"}))
    assert.is_false(ok)
    assert.equal("tensorstats.mean", err.op)
    assert.truthy(err.hint:find("astype", 1, true))
  end)
end)
