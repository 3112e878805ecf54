-- capsules_spec.lua -- the lifetime of a DLPack capsule.
--
-- A capsule (from a:to_dlpack or a:__dlpack) owns one exported tensor, and
-- through it a hold on the array's memory, until a consumer takes it:
--   * it is consumed AT MOST ONCE: a second dl.from_dlpack raises
--     CAPSULE_CONSUMED, and capsule.consumed is true as soon as a consumer
--     took the tensor;
--   * an unconsumed capsule that is garbage collected gives the tensor back
--     to its producer (the DLPack deleter runs once), releasing the memory;
--   * a consumed capsule no longer owns anything: collecting it does not
--     touch the imported array;
--   * the exported memory stays valid after the array is deleted, until the
--     consumer is done with it.
-- tostring(capsule) describes it ("dlbridge.Capsule (DLPack 1.3, device (1, 0),
-- unconsumed)").
--
-- tag #rss: the sanitizer run (.ci/run) excludes that tag, because there RSS
-- measures AddressSanitizer's shadow memory and quarantine, not dlbridge.
local dl = require "dlbridge"
local support = require "support"

local rss_mib = support.rss_mib

describe("a capsule", function()
  it("is consumed at most once: a second dl.from_dlpack raises CAPSULE_CONSUMED", function()
    local a = dl.arange(3)
    local capsule = a:to_dlpack()
    local b = dl.from_dlpack(capsule)
    local ok, err = pcall(dl.from_dlpack, capsule)
    assert.is_false(ok)
    assert.equal("CAPSULE_CONSUMED", err.code)
    assert.equal("dl.from_dlpack", err.op)
    assert.same({0, 1, 2}, b:totable())  -- the first import is unharmed
  end)

  it("is marked consumed as soon as a consumer takes it", function()
    local capsule = dl.zeros(3):to_dlpack()
    assert.is_false(capsule.consumed)
    dl.from_dlpack(capsule)
    assert.is_true(capsule.consumed)
  end)

  it("stays consumed after a failed second consume, and keeps its description", function()
    local capsule = dl.zeros(3):to_dlpack{max_version = {0, 8}}
    dl.from_dlpack(capsule)
    pcall(dl.from_dlpack, capsule)
    assert.is_true(capsule.consumed)
    assert.is_false(capsule.versioned)
    assert.same({1, 0}, capsule.device)
  end)

  it("is consumed by opts.copy = true as well", function()
    local capsule = dl.zeros(3):to_dlpack()
    dl.from_dlpack(capsule, {copy = true})
    assert.is_true(capsule.consumed)
    assert.equal("CAPSULE_CONSUMED", select(2, pcall(dl.from_dlpack, capsule)).code)
  end)

  it("keeps the exported memory valid after the array is deleted", function()
    local a = dl.arange(5, {dtype = "float32"})
    local capsule = a:to_dlpack()
    a:delete()
    collectgarbage("collect")
    local b = dl.from_dlpack(capsule)
    assert.same({0.0, 1.0, 2.0, 3.0, 4.0}, b:totable())
  end)

  it("keeps a legacy export valid after the array is deleted too", function()
    local a = dl.arange(3)
    local capsule = a:to_dlpack{max_version = {0, 8}}
    a:delete()
    assert.same({0, 1, 2}, dl.from_dlpack(capsule):totable())
  end)

  it("once consumed and collected, leaves the imported array alone", function()
    local a = dl.arange(4)
    local capsule = a:to_dlpack()
    local b = dl.from_dlpack(capsule)
    capsule = nil
    a:delete()
    collectgarbage("collect")
    assert.same({0, 1, 2, 3}, b:totable())
  end)

  it("can be dropped unconsumed without affecting the array", function()
    local a = dl.arange(3)
    for _ = 1, 10 do a:to_dlpack() end
    collectgarbage("collect")
    collectgarbage("collect")
    assert.same({0, 1, 2}, a:totable())
    a[1] = 7
    assert.equal(7, a[1])
  end)

  it("unconsumed and collected, releases its hold on the memory #rss", function()
    collectgarbage("collect")
    local a = dl.ones{8192, 1024}  -- 64 MiB, every page written
    local capsule = a:to_dlpack()
    local with_array = rss_mib()
    a:delete()
    local held = rss_mib()  -- the capsule still holds the memory
    assert.is_true(with_array - held < 16,
      ("RSS went from %.1f to %.1f MiB while the capsule held 64 MiB"):format(with_array, held))
    assert.is_false(capsule.consumed)
    capsule = nil
    collectgarbage("collect")
    collectgarbage("collect")
    local after = rss_mib()
    assert.is_true(held - after > 48,
      ("RSS went from %.1f to %.1f MiB after collecting the capsule"):format(held, after))
  end)

  it("consumed, hands its hold to the imported array #rss", function()
    collectgarbage("collect")
    local a = dl.ones{8192, 1024}
    local b = dl.from_dlpack(a:to_dlpack())
    a:delete()
    collectgarbage("collect")
    local held = rss_mib()
    assert.equal(1.0, b:get(8192, 1024))
    b:delete()
    local after = rss_mib()
    assert.is_true(held - after > 48,
      ("RSS went from %.1f to %.1f MiB after deleting the import"):format(held, after))
  end)
end)

describe("tostring(capsule)", function()
  it("describes a versioned capsule: version, device and state", function()
    local capsule = dl.zeros(3):to_dlpack()
    local s = tostring(capsule)
    assert.truthy(s:find("dlbridge.Capsule", 1, true), s)
    assert.truthy(s:find("1.3", 1, true), s)
    assert.truthy(s:find("(1, 0)", 1, true), s)
    assert.truthy(s:find("unconsumed", 1, true), s)
    dl.from_dlpack(capsule)
    s = tostring(capsule)
    assert.truthy(s:find("consumed", 1, true), s)
    assert.falsy(s:find("unconsumed", 1, true), s)
  end)

  it("says legacy for a legacy capsule", function()
    local s = tostring(dl.zeros(3):to_dlpack{max_version = {0, 8}})
    assert.truthy(s:find("legacy", 1, true), s)
    assert.falsy(s:find("1.3", 1, true), s)
  end)
end)
