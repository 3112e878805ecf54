-- memory_spec.lua -- how much memory a script holds, and the host's limit.
--
-- Array buffers live outside the Lua heap, so Lua's own allocator (and a
-- cap a host puts on it) never sees them. dlbridge counts them itself, per
-- lua_State:
--
--   dl.memory() -> {in_use =, peak =, limit =, backends = {cpu = {in_use =}, ...}}
--
-- in bytes of every buffer the state allocated (on any backend) or imported
-- zero-copy, from its creation until it is freed, including buffers a DLPack
-- consumer still holds after the script dropped the array. `limit` is nil
-- unless the host set one with the C function dlb_set_memory_limit(L, bytes)
-- (scripts cannot change it; in these specs the test module's
-- set_memory_limit stands in for the host).
--
-- Over the limit, an allocation or import first runs one full garbage
-- collection (garbage may be holding the budget), then raises OUT_OF_MEMORY
-- with nothing allocated. The state stays usable: freeing arrays (a:delete(),
-- or dropping them) makes room again.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local MiB = 1024 * 1024

describe("dl.memory()", function()
  it("counts the bytes of the arrays a script holds", function()
    collectgarbage()
    local before = dl.memory().in_use
    local a = dl.zeros({1024}, {dtype = "float32"})   -- 4096 bytes
    assert.equal(before + 4096, dl.memory().in_use)
    a:delete()
    assert.equal(before, dl.memory().in_use)
  end)

  it("reports the peak and each backend's share", function()
    local m = dl.memory()
    assert.is_true(m.peak >= m.in_use)
    assert.is_number(m.backends.cpu.in_use)
    assert.is_nil(m.limit)                             -- no limit unless the host sets one
  end)

  it("splits in_use between the backends that hold it", function()
    pcall(tb.register, {name = "memshare"})            -- an engine backend (once per state)
    collectgarbage()
    local before = dl.memory()
    local on_cpu = dl.zeros({1000}, {dtype = "float32"})                          -- 4000 bytes
    local on_engine = dl.zeros({500}, {dtype = "float64", device = "memshare"})  -- 4000 bytes
    local m = dl.memory()
    assert.equal(before.in_use + 8000, m.in_use)
    assert.equal(before.backends.cpu.in_use + 4000, m.backends.cpu.in_use)
    assert.equal(before.backends.memshare.in_use + 4000, m.backends.memshare.in_use)
    on_engine:delete()
    assert.equal(before.backends.cpu.in_use + 4000, dl.memory().backends.cpu.in_use)
    assert.equal(before.backends.memshare.in_use, dl.memory().backends.memshare.in_use)
    on_cpu:delete()
    assert.equal(before.backends.cpu.in_use, dl.memory().backends.cpu.in_use)
  end)

  it("shares one buffer between an array and its views", function()
    collectgarbage()
    local a = dl.zeros{100}
    local used = dl.memory().in_use
    local v = a:slice(1, 1, 50)
    assert.equal(used, dl.memory().in_use)             -- a view allocates nothing
    a:delete()
    assert.equal(used, dl.memory().in_use)             -- the view still holds the buffer
    v:delete()
    assert.equal(used - 800, dl.memory().in_use)
  end)

  it("counts memory a DLPack consumer holds until it lets go", function()
    collectgarbage()
    local before = dl.memory().in_use
    local a = dl.zeros{256}
    local capsule = a:to_dlpack()
    a:delete()
    assert.equal(before + 2048, dl.memory().in_use)    -- the capsule's tensor holds it
    local b = dl.from_dlpack(capsule)
    b:delete()
    assert.equal(before, dl.memory().in_use)
  end)
end)

describe("a memory limit set by the host", function()
  after_each(function() tb.set_memory_limit(0) end)   -- 0: no limit

  it("is visible to scripts as dl.memory().limit", function()
    tb.set_memory_limit(64 * MiB)
    assert.equal(64 * MiB, dl.memory().limit)
  end)

  it("refuses an allocation that would pass it, with OUT_OF_MEMORY and a hint", function()
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 4 * MiB)
    local err = support.expect_code("OUT_OF_MEMORY", dl.zeros, {8 * MiB})   -- 64 MiB of float64
    assert.matches("memory limit", err.message)
    assert.matches("dlb_set_memory_limit", err.hint)
  end)

  it("leaves the state usable: freeing arrays makes room again", function()
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 4 * MiB)
    local kept = {}
    local ok, err
    for i = 1, 10 do
      ok, err = pcall(dl.zeros, {MiB / 8})              -- 1 MiB each
      if not ok then break end
      kept[i] = err
    end
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.equal(4, #kept)
    kept = nil                                          -- garbage now: collected on demand
    assert.equal(MiB, dl.zeros({MiB / 8}).nbytes)
  end)

  it("collects garbage before refusing", function()
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 3 * MiB)
    for _ = 1, 20 do
      local tmp = dl.zeros{MiB / 8}                     -- dropped at once: garbage
      tmp[1] = 1
    end
    assert.is_true(dl.memory().in_use <= dl.memory().limit)
  end)

  it("collects garbage before refusing even when a script stopped the collector", function()
    -- Like Lua's own emergency collection: collectgarbage("stop") stops the
    -- pacing steps, not the one full collection at the limit, so one script
    -- cannot leave its garbage counted against the next.
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 3 * MiB)
    collectgarbage("stop")
    local ok, err = pcall(function()
      for _ = 1, 20 do
        local tmp = dl.zeros{MiB / 8}                   -- dropped at once: garbage
        tmp[1] = 1
      end
    end)
    collectgarbage("restart")
    assert.is_true(ok, tostring(err))
    assert.is_true(dl.memory().in_use <= dl.memory().limit)
  end)

  it("collects garbage before refusing small results of arithmetic too", function()
    collectgarbage()
    local x = dl.ones{8}                               -- 64 bytes of float64
    tb.set_memory_limit(dl.memory().in_use + 1024)     -- room for a few results only
    for _ = 1, 200 do
      local y = x + 1                                  -- dropped at once: garbage
      assert.equal(2, y[1])
    end
    assert.is_true(dl.memory().in_use <= dl.memory().limit)
  end)

  it("counts every kind of allocation: copies, casts, views that copy", function()
    collectgarbage()
    local a = dl.zeros{512, 256}                       -- 1 MiB of float64
    tb.set_memory_limit(dl.memory().in_use + MiB / 4)
    support.expect_code("OUT_OF_MEMORY", a.copy, a)
    support.expect_code("OUT_OF_MEMORY", a.astype, a, "float32")
    support.expect_code("OUT_OF_MEMORY", function() return a:transpose():contiguous() end)
    support.expect_code("OUT_OF_MEMORY", dl.array, a)
    support.expect_code("OUT_OF_MEMORY", a.to_dlpack, a, {copy = true})
    assert.equal(10, a:narrow(1, 1, 10).shape[1])     -- views allocate nothing: still fine
  end)

  it("lets topk of a few take memory for the few, not for the whole array", function()
    collectgarbage()
    local x = dl.random.default_rng(7):random(1000000, {dtype = "float32"})  -- 4 MB
    tb.set_memory_limit(dl.memory().in_use + 64 * 1024)
    local best = dl.topk(x, 5)                          -- a heap of 5: fits in 64 KiB
    assert.same({5}, best.shape)
    support.expect_code("OUT_OF_MEMORY", x.sort, x)     -- a whole sorted copy does not
  end)

  it("lets argsort of 32-bit values take its result alone (8 bytes an element)", function()
    collectgarbage()
    local x = dl.random.default_rng(7):random(1000000, {dtype = "float32"})
    tb.set_memory_limit(dl.memory().in_use + 8 * MiB + 64 * 1024)
    local order = x:argsort()                           -- int64 positions, sorted in place
    assert.same({1000000}, order.shape)
    assert.is_true(x[order[1]] <= x[order[2]])
  end)

  it("cannot be changed by a script", function()
    assert.is_nil(dl.set_memory_limit)
    local m = dl.memory()
    m.limit = 1                                         -- a fresh table each call
    assert.is_nil(dl.memory().limit)
  end)
end)
