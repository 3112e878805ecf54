-- sandbox_spec.lua -- what one script cannot change for the others.
--
-- Every script of a lua_State shares dlbridge's metatables (dlbridge.Array,
-- dlbridge.Capsule, dlbridge.Error, the module's State) and its small
-- tables (dl.E, dl.safe, dl.Error). They are read-only: getmetatable(obj)
-- returns a stand-in that reads through to the real metatable and raises
-- READ_ONLY on any write, and setmetatable(obj, ...) fails as for any
-- protected metatable. So no script can stop finalization (`__gc = nil`),
-- or break method lookup (`__index = function() end`), for the others.
--
-- The module table itself (`require "dlbridge"`) is an ordinary table, like
-- Lua's own libraries: a host that runs untrusted scripts gives each one a
-- view of it, dl.readonly(dl), in its environment. The debug library
-- (debug.setmetatable, debug.getregistry, debug.setupvalue) reaches past
-- any of this: such a host keeps it from scripts. What the host set in C
-- (memory limit, file access, registered backends) lives outside Lua and
-- survives a script clearing dlbridge's registry keys and loading it again.
local dl = require "dlbridge"
local support = require "support"
local expect_code = support.expect_code

describe("dlbridge's metatables", function()
  local a = dl.zeros{3}
  local objects = {
    array = a,
    capsule = dl.zeros{1}:to_dlpack(),
    error = select(2, pcall(dl.zeros, -1)),
  }

  for kind, object in pairs(objects) do
    it("cannot be changed through a " .. kind, function()
      local mt = getmetatable(object)
      expect_code("READ_ONLY", function() mt.__gc = nil end)
      expect_code("READ_ONLY", function() mt.__index = function() end end)
      expect_code("READ_ONLY", function() mt.anything = 1 end)
      assert.is_false(pcall(setmetatable, object, nil))
    end)

    it("can still be read through a " .. kind, function()
      assert.matches("^dlbridge%.", getmetatable(object).__name)
      assert.is_false(getmetatable(getmetatable(object))) -- the stand-in's own is hidden
    end)
  end

  it("keep working for everyone after a script tried", function()
    pcall(function() getmetatable(a).__index = function() end end)
    assert.equal(0, a:sum())
    assert.equal(dl.Error, getmetatable(objects.error))
    assert.is_true(objects.error:is("SHAPE"))
  end)
end)

describe("dl.E, dl.Error and dl.safe", function()
  it("are read-only", function()
    expect_code("READ_ONLY", function() dl.E.SHAPE = "mine" end)
    expect_code("READ_ONLY", function() dl.Error.__tostring = print end)
    expect_code("READ_ONLY", function() dl.safe.zeros = print end)
    assert.equal("SHAPE", dl.E.SHAPE)
  end)

  it("still list and call as before", function()
    local codes = 0
    for name, value in pairs(dl.E) do
      assert.equal(name, value)
      codes = codes + 1
    end
    assert.is_true(codes >= 19)
    local none, err = dl.safe.zeros{-1}
    assert.is_nil(none)
    assert.equal("SHAPE", err.code)
  end)
end)

describe("dl.readonly(t)", function()
  it("gives a read-only view: reads, pairs and # go through, writes raise READ_ONLY", function()
    local view = dl.readonly(dl)           -- what a host hands each untrusted script
    assert.equal(dl.zeros, view.zeros)
    expect_code("READ_ONLY", function() view.zeros = print end)
    assert.equal(dl.zeros, dl.zeros)       -- the module itself is untouched
    local list = dl.readonly{10, 20, 30}
    assert.equal(3, #list)
    local sum = 0
    for _, v in pairs(list) do sum = sum + v end
    assert.equal(60, sum)
  end)

  it("takes a table", function()
    expect_code("ARGUMENT", dl.readonly, 5)
  end)
end)
