-- Lua 5.4: local a <close> releases an array's memory when the scope ends.
--
-- An array is a to-be-closed value: its __close is a:delete(), so
--   local a <close> = dl.zeros{1024, 1024}
-- deletes a when the scope exits, by return or by error. Earlier Luas have no
-- <close>: call a:delete() (spec/lifetime_spec.lua holds everything else).
--
-- The memory check reads VmRSS from /proc/self/status (Linux) and carries
-- the tag #rss (see spec/lifetime_spec.lua).
local dl = require "dlbridge"
local support = require "support"

local rss_mib = support.rss_mib
local code_of = support.code_of

-- A 64 MiB float64 array with every page written (ones, not zeros: calloc'd
-- zero pages would not count as resident).
local function big_array()
  return dl.ones{8192, 1024}
end

describe("local a <close>", function()
  it("deletes the array when the scope ends", function()
    local ref
    do
      local a <close> = dl.zeros{1024, 1024}
      ref = a
      assert.equal(1024 * 1024, ref.size) -- alive inside the scope
    end
    assert.equal("DELETED", code_of(function() return ref.size end))
    assert.equal("dlbridge.Array (deleted)", tostring(ref))
  end)

  it("deletes the array when the scope exits by an error", function()
    local ref
    local ok, msg = pcall(function()
      local a <close> = dl.zeros{1024, 1024}
      ref = a
      error("boom")
    end)
    assert.is_false(ok)
    assert.matches("boom", msg) -- the original error comes through
    assert.equal("DELETED", code_of(function() return ref.size end))
  end)

  it("deletes the array when a function returns", function()
    local ref
    local function work()
      local a <close> = dl.ones(8)
      ref = a
      return a:totable()[1]
    end
    assert.equal(1, work())
    assert.equal("DELETED", code_of(ref.copy, ref))
  end)

  it("frees the memory at scope exit #rss", function()
    collectgarbage("collect")
    local during
    do
      local a <close> = big_array()
      during = rss_mib()
    end
    local after = rss_mib()
    assert.is_true(during - after > 48,
      ("RSS went from %.1f to %.1f MiB at scope exit"):format(during, after))
  end)

  it("does not mind an array deleted by hand before the scope ends", function()
    local ref
    do
      local a <close> = dl.zeros(4)
      ref = a
      a:delete()
    end
    assert.equal("dlbridge.Array (deleted)", tostring(ref))
  end)
end)
