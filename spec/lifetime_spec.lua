-- lifetime_spec.lua -- when an array's memory is released.
--
-- An array holds a reference to a buffer. The hold ends in one of three ways,
-- all the same idempotent release:
--   a:delete()                  now (later use raises DELETED)
--   dl.scope(function(close) local a = close(dl.zeros(n)) ... end)
--                               when the function returns or raises; on Lua
--                               5.4, local a <close> = ... does the same
--                               (spec/lua54/lifetime_spec.lua)
--   the garbage collector       some time after the last reference is gone
-- Views share the buffer: it lives until the last array using it lets go.
-- dlbridge tells Lua's collector how much memory each array holds, so a loop
-- that never calls delete() still stays within a small, bounded footprint.
--
-- The memory checks read VmRSS from /proc/self/status (Linux). Big arrays here
-- are 64 MiB: glibc always gives those their own mapping, so freeing one
-- returns its pages to the system at once and RSS shows it. They carry the
-- tag #rss: the sanitizer run (.ci/run) excludes that tag, because there RSS
-- measures AddressSanitizer's shadow memory and quarantine, not dlbridge.

local dl = require "dlbridge"
local support = require "support"

local rss_mib = support.rss_mib

-- A 64 MiB float64 array with every page written (ones, not zeros: calloc'd
-- zero pages would not count as resident).
local function big_array()
  return dl.ones{8192, 1024}
end

local code_of = support.code_of

describe("a:delete()", function()
  it("frees the memory now #rss", function()
    collectgarbage("collect")
    local a = big_array()
    local before = rss_mib()
    a:delete()
    local after = rss_mib()
    assert.is_true(before - after > 48,
      ("RSS went from %.1f to %.1f MiB after deleting 64 MiB"):format(before, after))
  end)

  it("can be called twice (and more)", function()
    local a = dl.zeros(4)
    a:delete()
    a:delete()
    a:delete()
    assert.equal("DELETED", code_of(function() return a.size end))
  end)

  it("makes every later use raise DELETED", function()
    local a = dl.arange(6):view{2, 3}
    a:delete()
    assert.equal("DELETED", code_of(function() return a.shape end))
    assert.equal("DELETED", code_of(function() return #a end))
    assert.equal("DELETED", code_of(function() return a[1] end))
    assert.equal("DELETED", code_of(function() a[1] = 0 end))
    assert.equal("DELETED", code_of(a.get, a, 1, 1))
    assert.equal("DELETED", code_of(a.copy, a))
    assert.equal("DELETED", code_of(a.transpose, a))
    assert.equal("DELETED", code_of(a.totable, a))
    assert.equal("DELETED", code_of(dl.array, a))
  end)

  it("leaves tostring working: 'dlbridge.Array (deleted)'", function()
    local a = dl.zeros(3)
    a:delete()
    assert.equal("dlbridge.Array (deleted)", tostring(a))
    assert.is_true(dl.is_array(a)) -- still an array object, just without memory
  end)
end)

describe("dl.scope(f)", function()
  it("deletes the arrays marked with close when f returns", function()
    local ref
    dl.scope(function(close)
      local a = close(dl.zeros{1024, 1024})
      ref = a
      assert.equal(1024 * 1024, ref.size) -- alive inside the scope
    end)
    assert.equal("DELETED", code_of(function() return ref.size end))
    assert.equal("dlbridge.Array (deleted)", tostring(ref))
  end)

  it("deletes them when f raises, and raises f's error", function()
    local ref
    local ok, msg = pcall(dl.scope, function(close)
      ref = close(dl.zeros{1024, 1024})
      error("boom")
    end)
    assert.is_false(ok)
    assert.matches("boom", msg) -- the original error comes through
    assert.equal("DELETED", code_of(function() return ref.size end))
  end)

  it("returns f's results, and passes its other arguments on", function()
    local ref
    local first, second = dl.scope(function(close, n)
      local a = close(dl.ones(n))
      ref = a
      return a:totable()[1], n
    end, 8)
    assert.equal(1, first)
    assert.equal(8, second)
    assert.equal("DELETED", code_of(ref.copy, ref))
  end)

  it("frees the memory at scope exit #rss", function()
    collectgarbage("collect")
    local during
    dl.scope(function(close)
      close(big_array())
      during = rss_mib()
    end)
    local after = rss_mib()
    assert.is_true(during - after > 48,
      ("RSS went from %.1f to %.1f MiB at scope exit"):format(during, after))
  end)

  it("does not mind an array deleted by hand before the scope ends", function()
    local ref
    dl.scope(function(close)
      local a = close(dl.zeros(4))
      ref = a
      a:delete()
    end)
    assert.equal("dlbridge.Array (deleted)", tostring(ref))
  end)

  it("close takes arrays only (ARGUMENT)", function()
    local err = support.error_of(dl.scope, function(close) close({1, 2}) end)
    assert.equal("ARGUMENT", err.code)
  end)
end)

describe("the garbage collector", function()
  it("releases an array's memory once nothing refers to it #rss", function()
    collectgarbage("collect")
    local a = big_array()
    local before = rss_mib()
    a = nil -- luacheck: ignore (dropping the only reference)
    collectgarbage("collect")
    collectgarbage("collect")
    local after = rss_mib()
    assert.is_true(before - after > 48,
      ("RSS went from %.1f to %.1f MiB after collecting 64 MiB"):format(before, after))
  end)

  it("does not run into arrays already deleted", function()
    for _ = 1, 100 do
      local a = dl.zeros(16)
      a:delete()
    end
    collectgarbage("collect")
    assert.equal(3, dl.zeros(3).size)
  end)

  it("leaves an array that another finalizer keeps reading as deleted", function()
    -- Both become garbage together; the collector finalizes the array,
    -- and the other object's finalizer stores it in `kept`.
    local kept
    do
      local a = dl.arange(4)
      local keeper = support.finalized_by(function() kept = a end)
      assert.is_not_nil(keeper)
    end
    collectgarbage("collect")
    collectgarbage("collect")
    assert.is_not_nil(kept)
    assert.equal("DELETED", code_of(function() return kept:copy() end))
    assert.equal("dlbridge.Array (deleted)", tostring(kept))
    kept:delete() -- still idempotent
    -- The arrays made after it are whole.
    local b = dl.arange(4)
    assert.same({0, 1, 2, 3}, b:totable())
    assert.equal("DELETED", code_of(function() return kept:copy() end))
  end)
end)

describe("views", function()
  it("keep the buffer alive after the base is deleted", function()
    local base = dl.arange(6)
    local view = base:view{2, 3}
    base:delete()
    assert.same({{0, 1, 2}, {3, 4, 5}}, view:totable())
    view[1] = dl.array{7, 8, 9}
    assert.equal(9, view:get(1, 3))
  end)

  it("keep the buffer alive after the base is collected", function()
    local function row_of_fresh_array()
      local base = dl.arange(6):view{2, 3}
      return base[2] -- a view of row 2; base itself becomes garbage
    end
    local row = row_of_fresh_array()
    collectgarbage("collect")
    collectgarbage("collect")
    assert.same({3, 4, 5}, row:totable())
  end)

  it("release the buffer when the last of them goes #rss", function()
    collectgarbage("collect")
    local base = big_array()
    local v1, v2 = base:view{-1}, base:narrow(1, 1, 10)
    local start = rss_mib()
    base:delete()
    v1:delete()
    assert.is_true(start - rss_mib() < 16, "freed while a view still used the buffer")
    assert.equal(1, v2:get(10, 1024))
    v2:delete()
    assert.is_true(start - rss_mib() > 48, "not freed after the last view was deleted")
  end)

  it("can be deleted without touching the base", function()
    local base = dl.arange(4)
    local view = base:slice(1, 1, -1, 2)
    view:delete()
    assert.same({0, 1, 2, 3}, base:totable())
  end)
end)

describe("memory accounting", function()
  it("keeps a loop of 2,000 arrays of 8 MiB without delete() below 300 MiB RSS #rss", function()
    collectgarbage("collect")
    local baseline = rss_mib()
    local peak = baseline
    for i = 1, 2000 do
      local a = dl.ones{1024, 1024} -- 8 MiB of float64, never deleted by hand
      assert(a.size == 1024 * 1024)
      if i % 50 == 0 then
        peak = math.max(peak, rss_mib())
      end
    end
    -- Without the accounting, the collector would see only small userdata
    -- and let up to 2,000 x 8 MiB = 16 GiB pile up.
    assert.is_true(peak < 300,
      ("peak RSS %.1f MiB (baseline %.1f MiB): the collector does not see array memory")
        :format(peak, baseline))
  end)
end)
