-- sandbox_spec.lua -- what one script cannot change for the others.
--
-- Every script of a lua_State shares dlbridge's metatables (dlbridge.Array,
-- dlbridge.Capsule, dlbridge.Error, dlbridge.Generator, the module's State)
-- and its small tables (dl.E, dl.safe, dl.random, dl.Error). They are
-- read-only stand-ins: getmetatable(obj) returns one, which reads through
-- to the real metatable and raises READ_ONLY on any write. A stand-in is a
-- userdata, so rawset, setmetatable and the table library cannot write to it
-- either, and a table read through it comes back as a stand-in too. So no
-- script can stop finalization (`__gc = nil`), or break method lookup
-- (`rawset(getmetatable(rng).__index, "random", f)`), for the others.
--
-- The module table itself (`require "dlbridge"`) is an ordinary table, like
-- Lua's own libraries: a host that runs untrusted scripts gives each one a
-- view of it, dl.readonly(dl), in its environment. The debug library
-- (debug.setmetatable, debug.getregistry, debug.setupvalue) reaches past
-- any of this: such a host keeps it from scripts. What the host set in C
-- (memory limit, file access, registered backends) lives outside Lua and
-- survives a script clearing dlbridge's registry keys and loading it again.
--
-- dl.pairs(x) walks a stand-in (or a table) on every Lua; pairs does too on
-- Lua 5.2 and later, through the stand-in's __pairs (spec/lua53/sandbox_spec.lua).
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
    for name, value in dl.pairs(dl.E) do
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
  it("gives a read-only view: reads, dl.pairs and # go through, writes raise READ_ONLY", function()
    local view = dl.readonly(dl)           -- what a host hands each untrusted script
    assert.equal(dl.zeros, view.zeros)
    expect_code("READ_ONLY", function() view.zeros = print end)
    assert.equal(dl.zeros, dl.zeros)       -- the module itself is untouched
    local list = dl.readonly{10, 20, 30}
    assert.equal(3, #list)
    local sum = 0
    for _, v in dl.pairs(list) do sum = sum + v end
    assert.equal(60, sum)
  end)

  it("takes a table", function()
    expect_code("ARGUMENT", dl.readonly, 5)
  end)
end)

describe("everything a script can reach", function()
  -- What one script holds: the view of the module its host gave it, and one
  -- object of every kind dlbridge makes.
  local function world()
    local view = dl.readonly(dl)
    local _, err = pcall(view.zeros, -1)
    return {
      module = view,
      array = view.zeros{2, 3},
      row = view.zeros{2, 3}[1],
      capsule = view.zeros{2}:to_dlpack(),
      versioned_capsule = view.zeros{2}:to_dlpack{max_version = {1, 0}},
      error = err,
      generator = view.random.default_rng(7),
    }
  end

  local function is_container(v)
    return type(v) == "table" or (type(v) == "userdata" and getmetatable(v) == false)
  end

  -- Calls visit(path, value) for every value reachable from the world by
  -- reading fields (dl.pairs) and metatables, each container once.
  local function walk(w, visit)
    local seen = {}
    local function go(path, v)
      visit(path, v)
      if type(v) ~= "table" and type(v) ~= "userdata" then return end
      if seen[v] then return end
      seen[v] = true
      local mt = getmetatable(v)
      if mt then go(path .. "<mt>", mt) end
      if is_container(v) then
        local keys = {}
        for k in dl.pairs(v) do keys[#keys + 1] = k end
        table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
        for _, k in ipairs(keys) do go(path .. "." .. tostring(k), v[k]) end
      end
    end
    local roots = {}
    for name in pairs(w) do roots[#roots + 1] = name end
    table.sort(roots)
    for _, name in ipairs(roots) do go(name, w[name]) end
  end

  -- What a script sees: every path with its value (containers and objects
  -- by kind, since each script has its own view and objects).
  local function snapshot(w)
    local s = {}
    walk(w, function(path, v)
      if is_container(v) then v = "container"
      elseif type(v) == "userdata" then v = "object " .. getmetatable(v).__name end
      s[path] = v
    end)
    return s
  end

  -- Every write Lua offers, tried on every container, and setmetatable on
  -- every object.
  local function attack(w)
    local writes = 0
    walk(w, function(_, v)
      if type(v) ~= "table" and type(v) ~= "userdata" then return end
      pcall(setmetatable, v, {__index = function() return 4 end})
      if not is_container(v) then return end
      local keys = {}
      for k in dl.pairs(v) do keys[#keys + 1] = k end
      for _, k in ipairs(keys) do
        pcall(function() v[k] = function() return 4 end end)
        pcall(rawset, v, k, false)
      end
      pcall(function() v.__probe = "set by another script" end)
      pcall(rawset, v, "__probe", "set by another script")
      pcall(table.insert, v, 4)
      pcall(table.remove, v, 1)
      pcall(table.sort, v)
      writes = writes + 1
    end)
    return writes
  end

  it("cannot be changed by one script for another", function()
    local before = snapshot(world())
    assert.is_true(attack(world()) > 10)
    local after = snapshot(world())
    for path, value in pairs(before) do
      assert.is_true(rawequal(value, after[path]), path .. " changed")
    end
    for path in pairs(after) do assert.is_not_nil(before[path], path .. " appeared") end
    assert.is_nil(dl.random.__probe)
    assert.equal(dl.random.default_rng(12345):random(),
                 dl.readonly(dl).random.default_rng(12345):random())
    assert.equal("SHAPE", dl.readonly(dl).E.SHAPE)
  end)

  it("refuses rawset on the module's tables and on getmetatable's stand-ins", function()
    local view = dl.readonly(dl)
    local rng = view.random.default_rng(1)
    assert.is_false(pcall(rawset, view, "zeros", print))
    assert.is_false(pcall(rawset, view.random, "default_rng", print))
    assert.is_false(pcall(rawset, view.E, "SHAPE", "mine"))
    assert.is_false(pcall(rawset, view.safe, "zeros", print))
    assert.is_false(pcall(rawset, getmetatable(rng).__index, "random", print))
    assert.equal("number", type(rng:random()))
  end)

  it("reads tables through read-only views, the same view each time", function()
    local view = dl.readonly{list = {1, 2, 3}}
    assert.equal(view.list, view.list)
    assert.equal(2, view.list[2])
    assert.equal(3, #view.list)
    expect_code("READ_ONLY", function() view.list[1] = 10 end)
    assert.is_false(pcall(rawset, view.list, 1, 10))
  end)
end)
