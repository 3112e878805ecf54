-- Lua 5.3 and later: the list of Array methods the specs go through is complete.
--
-- spec/support.lua lists the methods of an Array (support.ARRAY_METHODS)
-- for the specs that call every one of them (arguments_spec.lua,
-- empty_arrays_spec.lua). The real method table is an upvalue of Array's C
-- __index, which the debug library reads on Lua 5.2 and later (not on 5.1):
-- here the two are compared, so that a new method cannot go untested.
local dl = require "dlbridge"
local support = require "support"

-- The method table behind Array's __index (the upvalue holding "view").
local function array_methods()
  local index = getmetatable(dl.zeros(1)).__index
  for i = 1, math.huge do
    local name, value = debug.getupvalue(index, i)
    if not name then break end
    if type(value) == "table" and rawget(value, "view") then return value end
  end
  error("no method table found behind Array's __index")
end

describe("support.ARRAY_METHODS", function()
  it("lists every method of Array, and nothing else", function()
    local names = {}
    for name, f in pairs(array_methods()) do
      if type(f) == "function" then names[#names + 1] = name end
    end
    table.sort(names)
    assert.same(names, support.ARRAY_METHODS)
  end)
end)
