-- argument_hints_spec.lua -- every ARGUMENT error says what was expected.
--
-- err.hint of an ARGUMENT error describes the argument that was wrong, with
-- an example to copy:
--
--   dl.zeros("x")     hint: a shape is a table of integers, e.g. dl.zeros{2, 3},
--                           or integers, e.g. dl.zeros(2, 3); options follow ...
--   a:sum{keepdims = 1}   hint: keepdims = true keeps each reduced dimension ...
--   a:copy(5)         hint: a:copy() takes no arguments
--
-- An unexpected extra argument gets the function's usage line. The generic
-- "check the argument types against the documentation" is only a fallback
-- for errors that name no hint of their own; none of the misuses below
-- shows it.
local dl = require "dlbridge"
local support = require "support"

local unpack = table.unpack or unpack -- Lua 5.1 and LuaJIT have only unpack

local GENERIC = "check the argument types against the documentation"

local v = dl.array({1, 2, 3, 4}, {dtype = "float64"})
local m = dl.array({{1, 2}, {3, 4}}, {dtype = "float64"})

-- {what the call is, f, args...}: each raises ARGUMENT.
local misuses = {
  -- shapes and creation
  {"dl.zeros('x')", dl.zeros, "x"},
  {"dl.zeros()", dl.zeros},
  {"dl.zeros{'2'}", dl.zeros, {"2"}},
  {"dl.zeros{2, dtype = ...}", dl.zeros, {2, dtype = "int32"}},
  {"dl.zeros({2}, 3)", dl.zeros, {2}, 3},
  {"dl.zeros(2, 'int32')", dl.zeros, 2, "int32"},
  {"dl.zeros(2, {dtyp = ...})", dl.zeros, 2, {dtyp = "int8"}},
  {"dl.zeros(2, {device = 1})", dl.zeros, 2, {device = 1}},
  {"dl.ones(2, 5, 'x')", dl.ones, 2, 5, "x"},
  {"dl.full(2, 1, true)", dl.full, 2, 1, true},
  {"dl.full('x', 1)", dl.full, "x", 1},
  {"dl.array()", dl.array},
  {"dl.array({1}, 5)", dl.array, {1}, 5},
  {"dl.arange('x')", dl.arange, "x"},
  {"dl.arange(1, 'x')", dl.arange, 1, "x"},
  {"dl.arange(1, 2, 3, 4)", dl.arange, 1, 2, 3, 4},
  {"dl.arange(0, 10, 0)", dl.arange, 0, 10, 0},
  {"dl.linspace(1)", dl.linspace, 1},
  {"dl.frombytes(5, 'uint8')", dl.frombytes, 5, "uint8"},
  {"dl.frombytes('ab', 'uint8', 'x')", dl.frombytes, "ab", "uint8", "x"},
  -- elements
  {"a.copy(5) (a dot for a colon)", v.copy, 5},
  {"a['x'] = 1", function() v.x = 1 end},
  {"a[true]", function() return v[true] end},
  {"a:set()", v.set, v},
  {"a:get('x')", v.get, v, "x"},
  {"a:copy_from()", v.copy_from, v},
  -- views
  {"a:view('x')", v.view, v, "x"},
  {"a:view({2}, 2)", v.view, v, {2}, 2},
  {"a:view(2, 'x')", v.view, v, 2, "x"},
  {"a:permute(1)", m.permute, m, 1},
  {"a:narrow(1, 1, 'x')", v.narrow, v, 1, 1, "x"},
  {"a:slice(1, 'x')", v.slice, v, 1, "x"},
  {"a:slice(1, 1, 2, 0)", v.slice, v, 1, 1, 2, 0},
  {"a:slice(1, 1, 2, 'x')", v.slice, v, 1, 1, 2, "x"},
  {"a:transpose(1)", m.transpose, m, 1},
  {"a:squeeze('x')", v.squeeze, v, "x"},
  {"a:select('x', 1)", m.select, m, "x", 1},
  -- element-wise
  {"dl.add(a, 'x')", dl.add, v, "x"},
  {"dl.add(a)", dl.add, v},
  {"dl.add(a, a, 5)", dl.add, v, v, 5},
  {"dl.add(a, a, {outt = ...})", dl.add, v, v, {outt = v}},
  {"dl.add(a, a, {out = 5})", dl.add, v, v, {out = 5}},
  {"dl.clip(a)", dl.clip, v},
  {"dl.clip(a, 0, 1, {}, 5)", dl.clip, v, 0, 1, {}, 5},
  {"a < a", function() return v < v end},
  -- reductions
  {"a:sum('x')", v.sum, v, "x"},
  {"a:sum{dim = 'x'}", v.sum, v, {dim = "x"}},
  {"a:sum{dim = {1, 1}}", v.sum, v, {dim = {1, 1}}},
  {"a:sum{keepdims = 1}", v.sum, v, {keepdims = 1}},
  {"a:std{ddof = 'x'}", v.std, v, {ddof = "x"}},
  {"a:sum{bogus = 1}", v.sum, v, {bogus = 1}},
  {"a:max{dtype = 'int32'}", v.max, v, {dtype = "int32"}},
  {"a:sum{out = 5}", v.sum, v, {out = 5}},
  {"m:argmax{dim = {1, 2}}", m.argmax, m, {dim = {1, 2}}},
  {"a:sum({}, 5)", v.sum, v, {}, 5},
  -- products and joining
  {"dl.matmul(m, 5)", dl.matmul, m, 5},
  {"dl.matmul(m, m, 5)", dl.matmul, m, m, 5},
  {"dl.matmul(m, m, {outt = ...})", dl.matmul, m, m, {outt = m}},
  {"dl.matmul(m, m, {out = 1})", dl.matmul, m, m, {out = 1}},
  {"dl.dot(a, a, {})", dl.dot, v, v, {}},
  {"dl.concat(a)", dl.concat, v},
  {"dl.concat(5)", dl.concat, 5},
  {"dl.concat{}", dl.concat, {}},
  {"dl.concat{a, 5}", dl.concat, {v, 5}},
  {"dl.stack({a, a}, 'x')", dl.stack, {v, v}, "x"},
  -- devices
  {"dl.device_put(a)", dl.device_put, v},
  {"dl.device_put(a, 5)", dl.device_put, v, 5},
  {"dl.device_put(a, 'cpu', 5)", dl.device_put, v, "cpu", 5},
  {"dl.device_put(a, 'cpu', {copy = 1})", dl.device_put, v, "cpu", {copy = 1}},
  {"dl.device_put(a, 'cpu', {cpy = true})", dl.device_put, v, "cpu", {cpy = true}},
  {"a:to()", v.to, v},
  -- errors
  {"dl.is_error(1, 2)", dl.is_error, 1, 2},
  {"err.is(5)", select(2, pcall(dl.zeros, -1)).is, 5},
  -- DLPack (a hint from the usage line when the raise names none)
  {"a:to_dlpack(5)", v.to_dlpack, v, 5},
  {"a:to_dlpack{bogus = 1}", v.to_dlpack, v, {bogus = 1}},
  {"dl.from_dlpack(5)", dl.from_dlpack, 5},
  {"dl.from_dlpack(a, 5)", dl.from_dlpack, v, 5},
}

describe("the hint of an ARGUMENT error", function()
  for _, case in ipairs(misuses) do
    it("says what was expected: " .. case[1], function()
      local err = support.expect_code("ARGUMENT", case[2], unpack(case, 3))
      assert.is_string(err.hint)
      assert.are_not.equal(GENERIC, err.hint, case[1])
      -- Something specific: an example to copy (a call, a table or a name in quotes).
      assert.matches("[%(%{\"]", err.hint, case[1] .. ": " .. err.hint)
    end)
  end

  it("of an extra argument is the usage line, which names the function", function()
    local err = support.expect_code("ARGUMENT", v.copy, v, 5)
    assert.equal("a:copy() takes no arguments", err.hint)
    err = support.expect_code("ARGUMENT", dl.sum, v, {}, 5)
    assert.matches("^dl%.sum%(a, opts%) or a:sum%(opts%)", err.hint)
    err = support.expect_code("ARGUMENT", dl.add, v, v, {}, 5)
    assert.matches("^dl%.add%(x, y, opts%) or x:add%(y, opts%)", err.hint)
    err = support.expect_code("ARGUMENT", v.view, v, {4}, 5)
    assert.matches("a:view{3, 2} or a:view(3, 2)", err.hint, 1, true)
  end)

  it("of a shape shows the table form and the integers form of that very call", function()
    local err = support.expect_code("ARGUMENT", dl.zeros, "x")
    assert.equal("a shape is a table of integers, e.g. dl.zeros{2, 3}, or integers, e.g. "
      .. "dl.zeros(2, 3); options follow in their own table: dl.zeros(2, 3, {dtype = \"int32\"})",
      err.hint)
    err = support.expect_code("ARGUMENT", v.reshape, v, "x")
    assert.equal("a shape is a table of integers, e.g. a:reshape{2, 3}, or integers, e.g. "
      .. "a:reshape(2, 3)", err.hint)
  end)

  it("of a method called with a dot shows the colon form", function()
    local err = support.expect_code("ARGUMENT", v.totable)
    assert.matches("a:totable(...)", err.hint, 1, true)
  end)
end)
