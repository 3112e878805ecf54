-- lua_versions_spec.lua -- one script, the same arrays, on every Lua.
--
-- dlbridge builds for Lua 5.1, 5.2, 5.3, 5.4 and LuaJIT 2.1 from one source
-- (docs/manual/lua-versions.md lists every difference in one table). This spec runs
-- on all of them; where a Lua lacks something, it shows the route that works
-- everywhere: dl.pairs for pairs over arrays and read-only views, dl.scope
-- for <close>, and on LuaJIT a:ptr() for FFI loops.

local dl = require "dlbridge"
local support = require "support"

local is_jit = rawget(_G, "jit") ~= nil
local has_integers = math.type ~= nil -- 5.3+

describe("numbers on every Lua", function()
  it("a whole number makes an int64 array, a fraction a float64 one", function()
    assert.equal("int64", dl.array{1, 2, 3}.dtype)
    assert.equal("float64", dl.array{1.5, 2}.dtype)
    assert.equal("float64", dl.array{2^60}.dtype) -- beyond 2^53 on 5.1, a float on 5.3+
  end)

  it("a dtype always wins over what the numbers look like", function()
    assert.equal("float64", dl.array({1, 2}, {dtype = "float64"}).dtype)
    assert.equal("int32", dl.array({1, 2}, {dtype = "int32"}).dtype)
  end)

  it("indices are whole numbers: 2.0 is 2, 2.5 is an INDEX error, never truncated", function()
    local a = dl.array{10, 20, 30}
    assert.equal(20, a[2.0])
    assert.equal("INDEX", support.code_of(function() return a[2.5] end))
    assert.equal("INDEX", support.code_of(function() return a:get(2.5) end))
  end)

  it("shapes are whole numbers too: 2.5 is no extent", function()
    assert.equal(6, dl.zeros{2.0, 3}.size)
    assert.equal("SHAPE", support.code_of(function() return dl.zeros{2.5} end))
  end)

  it("an int64 beyond 2^53 is never rounded on its way into Lua", function()
    local a = dl.array({2^60, -5}, {dtype = "int64"})
    assert.equal(-5, a[2])
    if has_integers then
      assert.equal(2^60, a[1]) -- a Lua integer
    elseif is_jit then
      local x = a[1] -- a boxed int64_t, as LuaJIT's FFI gives: 1152921504606846976LL
      assert.equal("cdata", type(x))
      assert.equal("1152921504606846976LL", tostring(x))
      local b = dl.array{x} -- and it goes back in exactly
      assert.equal("int64", b.dtype)
      assert.is_true(b[1] == x)
    else -- 5.1, 5.2: no exact number: an error naming the exact routes
      local err = support.error_of(function() return a[1] end)
      assert.equal("VALUE", err.code)
      assert.truthy(err.hint:find("tostring(a)", 1, true))
      assert.truthy(tostring(a):find("1152921504606846976", 1, true))
    end
  end)
end)

describe("dl.pairs", function()
  it("walks the first dimension of an array, as pairs(a) does on 5.2+", function()
    local seen = {}
    for i, v in dl.pairs(dl.array{10, 20, 30}) do seen[i] = v end
    assert.same({10, 20, 30}, seen)
  end)

  it("gives rows of an n-D array as views", function()
    local m = dl.array{{1, 2}, {3, 4}}
    for i, row in dl.pairs(m) do row[1] = 0 end
    assert.same({{0, 2}, {0, 4}}, m:totable())
  end)

  it("reads through read-only views such as dl.E", function()
    local codes = {}
    for code in dl.pairs(dl.E) do codes[code] = true end
    assert.is_true(codes.SHAPE)
    assert.is_true(codes.BACKEND_INCOMPATIBLE)
  end)

  it("walks a plain table", function()
    local n = 0
    for _ in dl.pairs{a = 1, b = 2} do n = n + 1 end
    assert.equal(2, n)
  end)

  it("takes nothing else", function()
    assert.equal("ARGUMENT", support.code_of(dl.pairs, 42))
  end)
end)

describe("dl.scope", function()
  it("deletes what close() marked when the function returns, and returns its results", function()
    local kept
    local total, label = dl.scope(function(close)
      kept = close(dl.ones{4})
      return kept:sum(), "done"
    end)
    assert.equal(4, total)
    assert.equal("done", label)
    assert.equal("DELETED", support.code_of(function() return kept:sum() end))
  end)

  it("deletes them when the function raises too, and raises the same error", function()
    local kept
    local err = support.error_of(dl.scope, function(close)
      kept = close(dl.zeros{2})
      return dl.zeros{-1}
    end)
    assert.equal("SHAPE", err.code)
    assert.equal("DELETED", support.code_of(function() return kept:sum() end))
  end)

  it("marks only arrays", function()
    assert.equal("ARGUMENT", support.code_of(dl.scope, function(close) close("frame") end))
  end)
end)

describe("a:ptr()", function()
  if is_jit then
    it("is a typed FFI pointer to element 1 on LuaJIT", function()
      local a = dl.array({1, 2, 3}, {dtype = "float32"})
      local p = a:ptr()
      assert.equal(2, p[1])
      p[2] = 30 -- writes the array's memory
      assert.equal(30, a[3])
      assert.truthy(tostring(p):find("float *", 1, true))
    end)

    it("is const for a read-only array, nil for an empty one", function()
      assert.truthy(tostring(support.readonly_array():ptr()):find("const", 1, true))
      assert.is_nil(dl.zeros{0}:ptr())
    end)
  else
    it("raises UNSUPPORTED outside LuaJIT, naming the routes that work", function()
      local err = support.error_of(function() return dl.zeros{3}:ptr() end)
      assert.equal("UNSUPPORTED", err.code)
      assert.truthy(err.hint:find("tobytes", 1, true))
    end)
  end
end)
