-- Joining arrays into a new one.
--
-- This file documents:
--   dl.concat(list, dim)  the arrays of list joined along their dim `dim`
--                         (default 1; negative counts from the end). All have
--                         the same number of dims and the same extents except
--                         along dim (NumPy's concatenate).
--   dl.stack(list, dim)   the arrays of list, all of one shape, joined along a
--                         new dim inserted at position dim (1..ndim+1, default
--                         1; -1 puts it last) (NumPy's stack).
-- list is a Lua list (a table) of arrays, as long as memory allows. The
-- result is a new contiguous array on the arrays' device; its dtype is the
-- promotion of all of theirs (int8 with uint8 gives int16, int64 with float32
-- gives float64). Views of any layout join as they are.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local expect_code = support.expect_code

local HANDLES, HOSTMEM = "engine_join", "engine_join_host"
if not support.registered(HANDLES) then tb.register{name = HANDLES} end
if not support.registered(HOSTMEM) then tb.register{name = HOSTMEM, host_pointer = true} end

describe("dl.concat(list, dim)", function()
  it("joins along the first dim by default", function()
    local c = dl.concat{dl.array{{1, 2}}, dl.array{{3, 4}, {5, 6}}}
    assert.same({3, 2}, c.shape)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, c:totable())
  end)

  it("joins along any dim, negative from the end", function()
    local a, b = dl.array{{1, 2}, {3, 4}}, dl.array{{5}, {6}}
    assert.same({{1, 2, 5}, {3, 4, 6}}, dl.concat({a, b}, 2):totable())
    assert.same({{1, 2, 5}, {3, 4, 6}}, dl.concat({a, b}, -1):totable())
  end)

  it("promotes the dtypes of all the arrays", function()
    local i8 = dl.array({1, 2}, {dtype = "int8"})
    local u8 = dl.array({3}, {dtype = "uint8"})
    local c = dl.concat{i8, u8}
    assert.equal("int16", c.dtype)
    assert.same({1, 2, 3}, c:totable())
    assert.equal("float64", dl.concat{dl.array{1}, dl.array({2.5}, {dtype = "float32"})}.dtype)
  end)

  it("makes a new array, even from one array", function()
    local a = dl.array{1, 2, 3}
    local c = dl.concat{a}
    c[1] = 10
    assert.same({1, 2, 3}, a:totable())
  end)

  it("joins views as they are: transposed, reversed, expanded", function()
    local t = dl.array{{1, 3}, {2, 4}}:T()                 -- {{1, 2}, {3, 4}}
    local r = dl.array{{6, 5}}:slice(2, -1, 1, -1)          -- {{5, 6}}
    local e = dl.array{7, 8}:expand{2, 2}                   -- {{7, 8}, {7, 8}}
    assert.same({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {7, 8}}, dl.concat{t, r, e}:totable())
  end)

  it("takes arrays with a zero extent along dim", function()
    local c = dl.concat({dl.zeros{2, 0}, dl.ones{2, 1}, dl.zeros{2, 0}}, 2)
    assert.same({{1}, {1}}, c:totable())
  end)
end)

describe("dl.stack(list, dim)", function()
  it("joins along a new first dim by default", function()
    local s = dl.stack{dl.array{1, 2}, dl.array{3, 4}, dl.array{5, 6}}
    assert.same({3, 2}, s.shape)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, s:totable())
  end)

  it("inserts the new dim at position dim (-1: last)", function()
    local a, b = dl.array{1, 2}, dl.array{3, 4}
    assert.same({{1, 3}, {2, 4}}, dl.stack({a, b}, 2):totable())
    assert.same({{1, 3}, {2, 4}}, dl.stack({a, b}, -1):totable())
    assert.same({2, 3, 4, 5}, dl.stack({dl.zeros{2, 3, 4}, dl.zeros{2, 3, 4}, dl.zeros{2, 3, 4},
                                        dl.zeros{2, 3, 4}, dl.zeros{2, 3, 4}}, 4).shape)
  end)

  it("stacks 0-d arrays into a 1-D array", function()
    assert.same({1.5, 2.5}, dl.stack{dl.array(1.5), dl.array(2.5)}:totable())
  end)

  it("promotes the dtypes", function()
    local s = dl.stack({dl.array({1, 2}, {dtype = "int8"}), dl.array({3, 4}, {dtype = "uint8"})}, 2)
    assert.equal("int16", s.dtype)
    assert.same({{1, 3}, {2, 4}}, s:totable())
  end)

  it("takes long lists", function()
    local rows = {}
    for i = 1, 1000 do rows[i] = dl.array{i, -i} end
    local s = dl.stack(rows)
    assert.same({1000, 2}, s.shape)
    assert.same({1000, -1000}, s[1000]:totable())
  end)
end)

describe("joining on other backends", function()
  it("joins on a backend whose memory the host addresses; the result stays there", function()
    local a = dl.array({1, 2}, {device = HOSTMEM})
    local c = dl.concat{a, a}
    assert.equal(HOSTMEM .. ":0", c.device)
    assert.same({1, 2, 1, 2}, c:totable())
  end)

  it("joins where the host cannot reach the memory too: joins are copies, which every backend does", function()
    local a = dl.array({1, 2}, {device = HANDLES})
    local c = dl.concat{a, a}
    assert.equal(HANDLES .. ":0", c.device)
    assert.same({1, 2, 1, 2}, c:totable())
  end)

  it("raises ARGUMENT for arrays on different devices", function()
    expect_code("ARGUMENT", dl.stack, {dl.array{1}, dl.array({2}, {device = HOSTMEM})})
  end)
end)

describe("misuse of concat and stack", function()
  it("raises ARGUMENT for an empty list or a list that is not a table", function()
    expect_code("ARGUMENT", dl.concat, {})
    expect_code("ARGUMENT", dl.stack, {})
    expect_code("ARGUMENT", dl.concat, nil)
    local err = expect_code("ARGUMENT", dl.concat, dl.zeros{2}, dl.zeros{2}) -- forgot the braces
    assert.matches("dl.concat({a, b}, dim)", err.message, 1, true)
  end)

  it("raises ARGUMENT naming an element that is not an array", function()
    local err = expect_code("ARGUMENT", dl.concat, {dl.zeros{2}, {1, 2}})
    assert.matches("element 2", err.message)
    expect_code("ARGUMENT", dl.stack, {dl.zeros{2}, dl.zeros{2}, 3})
  end)

  it("raises SHAPE for 0-d arrays in concat (stack them instead)", function()
    expect_code("SHAPE", dl.concat, {dl.array(1), dl.array(2)})
  end)

  it("raises SHAPE for extents that differ, naming the array", function()
    local err = expect_code("SHAPE", dl.concat, {dl.zeros{2, 3}, dl.zeros{3, 3}}, 2)
    assert.matches("array 2", err.message)
    expect_code("SHAPE", dl.concat, {dl.zeros{2, 3}, dl.zeros{2, 3, 1}})
    expect_code("SHAPE", dl.stack, {dl.zeros{2, 3}, dl.zeros{2, 4}})
  end)

  it("raises INDEX for a dim out of range and ARGUMENT for a dim that is no number", function()
    expect_code("INDEX", dl.concat, {dl.zeros{2, 3}}, 3)
    expect_code("INDEX", dl.stack, {dl.zeros{2, 3}}, 4)
    expect_code("INDEX", dl.concat, {dl.zeros{2, 3}}, 0)
    expect_code("ARGUMENT", dl.concat, {dl.zeros{2, 3}}, "rows")
  end)

  it("gives DELETED or ARGUMENT, never a crash, when a finalizer deletes or removes an array", function()
    -- A memory limit just below what the result needs makes dlbridge collect
    -- garbage before it allocates (see memory_spec.lua): the pending
    -- finalizer runs inside the call and changes the list.
    finally(function() tb.set_memory_limit(0) end)
    local cases = {{dl.concat, "delete", "DELETED"}, {dl.stack, "delete", "DELETED"},
                   {dl.concat, "remove", "ARGUMENT"}, {dl.stack, "remove", "ARGUMENT"}}
    for _, case in ipairs(cases) do
      local f, action, code = case[1], case[2], case[3]
      local list = {dl.zeros{16, 16}, dl.ones{16, 16}, dl.ones{16, 16}}
      local ran = false
      support.finalized_by(function() -- garbage whose finalizer is pending
        if action == "delete" then list[2]:delete() else list[2] = "gone" end
        ran = true
      end)
      tb.set_memory_limit(dl.memory().in_use + 1024)     -- the 6 KiB result does not fit
      expect_code(code, f, list)
      tb.set_memory_limit(0)
      assert.is_true(ran, "the finalizer did not run inside the call")
    end
  end)

  it("raises DELETED for a deleted array", function()
    local a, b = dl.zeros{2}, dl.zeros{2}
    b:delete()
    expect_code("DELETED", dl.concat, {a, b})
    expect_code("DELETED", dl.stack, {b, a})
  end)
end)
