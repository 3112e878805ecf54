-- Lua 5.3 and later: pairs walks dlbridge's read-only stand-ins.
--
-- dl.E, dl.safe, dl.random and every dl.readonly(t) are stand-ins
-- (userdata) whose __pairs walks the real table, so pairs goes through them
-- as it does through a table. Lua 5.1 and LuaJIT ignore __pairs: dl.pairs
-- walks them on every Lua (spec/sandbox_spec.lua holds everything else).
local dl = require "dlbridge"
local support = require "support"
local expect_code = support.expect_code

describe("dl.E, dl.Error and dl.safe", function()
  it("still list with pairs", function()
    local codes = 0
    for name, value in pairs(dl.E) do
      assert.equal(name, value)
      codes = codes + 1
    end
    assert.is_true(codes >= 19)
  end)
end)

describe("dl.readonly(t)", function()
  it("gives a read-only view: reads, pairs and # go through, writes raise READ_ONLY", function()
    local list = dl.readonly{10, 20, 30}
    assert.equal(3, #list)
    local sum = 0
    for _, v in pairs(list) do sum = sum + v end
    assert.equal(60, sum)
    expect_code("READ_ONLY", function() list[1] = 0 end)
  end)

  it("walks the view of the module a host hands a script", function()
    local view, names, module_names = dl.readonly(dl), 0, 0
    for name, value in pairs(view) do
      assert.equal(type(dl[name]) == "table" and "userdata" or type(dl[name]), type(value), name)
      names = names + 1
    end
    for _ in pairs(dl) do module_names = module_names + 1 end
    assert.equal(module_names, names)
  end)
end)
