-- Arrays from tables with metatables (proxies, lazy sequences, class objects).
--
-- dl.array reads a table that has a metatable as table.unpack reads it:
-- its length is #t (through __len) and its elements t[1]..t[n] (through
-- __index). Plain tables are read directly. The same holds wherever nested
-- tables stand for an array: operands (a + t, dl.add(a, t)), a:copy_from(t),
-- a[i] = t.
--
--   local squares = setmetatable({}, {
--     __len = function() return 4 end,
--     __index = function(_, i) return i * i end,
--   })
--   dl.array(squares)                 --> array([1, 4, 9, 16], dtype=int64)
--
-- The metamethods are Lua code running in the middle of the call:
--   * an error they raise propagates unchanged (as from table.unpack);
--   * __len must give a non-negative integer (ARGUMENT, or SHAPE when
--     negative); a length that changes while the table is read, or rows of
--     different lengths, raise SHAPE; nesting deeper than 32 raises SHAPE;
--   * arrays they delete are noticed: the call raises DELETED.
-- A {re=, im=} complex value is recognised by its own fields, never through
-- __index. Keys outside 1..n are refused (ARGUMENT) when the table itself
-- holds the sequence ({1, 2, x = 3}); a proxy's own fields are its business.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

-- A read-only view of a Lua list: #proxy and proxy[i] come from list.
local function proxy_of(list)
  return setmetatable({}, {
    __len = function() return #list end,
    __index = function(_, i) return list[i] end,
  })
end

-- A proxy of n elements whose __index runs f(i) first.
local function calling(n, f)
  return setmetatable({}, {
    __len = function() return n end,
    __index = function(_, i) return f(i) end,
  })
end

describe("dl.array of a table with __len and __index", function()
  it("reads #t and t[1]..t[n] through the metamethods", function()
    local squares = calling(4, function(i) return i * i end)
    local a = dl.array(squares)
    assert.same({4}, a.shape)
    assert.equal("int64", a.dtype)
    assert.same({1, 4, 9, 16}, a:totable())
  end)

  it("nests: rows may be proxies, plain tables or a mix", function()
    local m = dl.array(proxy_of{proxy_of{1, 2}, {3, 4}})
    assert.same({{1, 2}, {3, 4}}, m:totable())
  end)

  it("infers the dtype from the values it reads, and takes opts.dtype", function()
    assert.equal("float64", dl.array(proxy_of{1, 2.5}).dtype)
    assert.equal("bool", dl.array(proxy_of{true, false}).dtype)
    assert.equal("complex128", dl.array(proxy_of{{re = 1, im = 2}}).dtype)
    assert.equal("float32", dl.array(proxy_of{1, 2}, {dtype = "float32"}).dtype)
  end)

  it("gives an empty array only when #t is 0", function()
    local a = dl.array(proxy_of{})
    assert.same({0}, a.shape)
  end)

  it("reads a table whose metatable has no __len or __index as a plain table", function()
    local Point = {}
    local list = setmetatable({1, 2, 3}, Point)
    assert.same({1, 2, 3}, dl.array(list):totable())
    assert.equal("ARGUMENT", code_of(dl.array, setmetatable({1, 2, x = 3}, Point)))
  end)

  it("works for operands, copy_from and element assignment too", function()
    local a = dl.zeros(3)
    assert.same({1, 2, 3}, (a + proxy_of{1, 2, 3}):totable())
    a:copy_from(proxy_of{7, 8, 9})
    assert.same({7, 8, 9}, a:totable())
    local m = dl.zeros(2, 2)
    m[2] = proxy_of{5, 6}
    assert.same({{0, 0}, {5, 6}}, m:totable())
  end)
end)

describe("dl.array of a table whose metamethods misbehave", function()
  it("lets an error from __len or __index propagate unchanged", function()
    local failing_len = setmetatable({}, {__len = function() error("no length", 0) end})
    assert.same({false, "no length"}, {pcall(dl.array, failing_len)})
    local mine = {why = "no item", where = "my own field"}
    local failing_index = calling(3, function(i) if i == 2 then error(mine) end return i end)
    local ok, err = pcall(dl.array, failing_index)
    assert.is_false(ok)
    assert.equal(mine, err)
    assert.same({why = "no item", where = "my own field"}, err) -- not touched on the way
  end)

  it("raises ARGUMENT when __len is not an integer, SHAPE when it is negative", function()
    local function with_len(n) return setmetatable({}, {__len = function() return n end}) end
    assert.equal("ARGUMENT", code_of(dl.array, with_len(1.5)))
    assert.equal("ARGUMENT", code_of(dl.array, with_len("3")))
    assert.equal("ARGUMENT", code_of(dl.array, with_len({})))
    assert.equal("SHAPE", code_of(dl.array, with_len(-1)))
  end)

  it("raises SHAPE when the length changes while the table is read", function()
    local calls = 0
    local growing = setmetatable({}, {
      __len = function() calls = calls + 1; return calls end,
      __index = function() return 1 end,
    })
    assert.equal("SHAPE", code_of(dl.array, growing))
    -- rows whose lengths disagree, however they are made
    local n = 0
    local shifty_row = setmetatable({}, {
      __len = function() n = n + 1; return n end,
      __index = function() return 0 end,
    })
    assert.equal("SHAPE", code_of(dl.array, {shifty_row, shifty_row}))
  end)

  it("raises SHAPE for a proxy that nests into itself", function()
    local self_nesting
    self_nesting = calling(1, function() return self_nesting end)
    assert.equal("SHAPE", code_of(dl.array, self_nesting))
  end)

  it("refuses a length that cannot be allocated before reading any element", function()
    local reads = 0
    local huge = calling(2 ^ 62, function() reads = reads + 1; return 1 end) -- (math.maxinteger: spec/lua53)
    assert.equal("SHAPE", code_of(dl.array, huge))
    assert.equal(1, reads) -- t[1], to learn that it is a number
  end)

  it("raises DELETED when a metamethod deletes an array the call uses", function()
    local function deleting(victim)
      return calling(3, function() victim:delete(); return 1 end)
    end
    local a = dl.zeros(3)
    assert.equal("DELETED", code_of(dl.add, a, deleting(a)))
    local b = dl.zeros(3)
    assert.equal("DELETED", code_of(b.copy_from, b, deleting(b)))
    local out = dl.zeros(3)
    assert.equal("DELETED", code_of(dl.add, dl.ones(3), deleting(out), {out = out}))
    local c = dl.zeros(3)
    assert.equal("DELETED", code_of(dl.where, deleting(c), c, 2))
  end)

  it("cannot yield: a coroutine.yield inside __index is an error of the call", function()
    local yielding = calling(2, function() return coroutine.yield() end)
    local co = coroutine.create(function() return dl.array(yielding) end)
    local ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.matches("yield across .*C%-call boundary", err) -- Lua 5.1: "metamethod/C-call"
  end)
end)
