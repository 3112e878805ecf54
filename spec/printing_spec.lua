-- printing_spec.lua -- what tostring(a) and print(a) show.
--
-- The text is NumPy-like: array(<elements>, shape=(...), dtype=..., device=...).
--   * elements are right-aligned to the widest one; rows of a 2-D array line
--     up under the first bracket, and 3-D blocks are separated by a blank line;
--   * integral floats print with a trailing dot ("1."), other floats with up
--     to 8 significant digits; complex numbers print as "1.+2.j";
--     booleans as true/false;
--   * arrays above 1,000 elements are summarised: the first and last 3 entries
--     of each dimension, with "..." between, so printing never lists a
--     million elements.
-- tostring of a deleted array is "dlbridge.Array (deleted)" (see lifetime_spec).

local dl = require "dlbridge"

describe("tostring(a)", function()
  describe("for small arrays", function()
    it("shows a 1-D array with its shape, dtype and device", function()
      assert.equal("array([1, 2, 3], shape=(3,), dtype=int64, device=cpu:0)",
        tostring(dl.array{1, 2, 3}))
    end)

    it("lines up the rows of a 2-D array under the first bracket", function()
      assert.equal(
        "array([[ 1,  2,  3],\n" ..
        "       [ 4, 50,  6]], shape=(2, 3), dtype=int64, device=cpu:0)",
        tostring(dl.array{{1, 2, 3}, {4, 50, 6}}))
    end)

    it("separates the blocks of a 3-D array with a blank line", function()
      assert.equal(
        "array([[[ 0,  1,  2,  3],\n" ..
        "        [ 4,  5,  6,  7],\n" ..
        "        [ 8,  9, 10, 11]],\n" ..
        "\n" ..
        "       [[12, 13, 14, 15],\n" ..
        "        [16, 17, 18, 19],\n" ..
        "        [20, 21, 22, 23]]], shape=(2, 3, 4), dtype=int64, device=cpu:0)",
        tostring(dl.arange(24):view{2, 3, 4}))
    end)

    it("shows a 0-d array as its single value with shape ()", function()
      assert.equal("array(5, shape=(), dtype=int64, device=cpu:0)", tostring(dl.array(5)))
      assert.equal("array(2.5, shape=(), dtype=float64, device=cpu:0)", tostring(dl.array(2.5)))
      assert.equal("array(0., shape=(), dtype=float64, device=cpu:0)", tostring(dl.zeros{}))
    end)

    it("shows arrays of size 0 as empty brackets", function()
      assert.equal("array([], shape=(0,), dtype=float64, device=cpu:0)", tostring(dl.zeros(0)))
      assert.equal("array([[], []], shape=(2, 0), dtype=float64, device=cpu:0)",
        tostring(dl.zeros{2, 0}))
      assert.equal("array([], shape=(0, 3), dtype=float64, device=cpu:0)",
        tostring(dl.zeros{0, 3}))
    end)

    it("shows views in their logical order, whatever the strides", function()
      assert.equal(
        "array([[0, 3],\n" ..
        "       [1, 4],\n" ..
        "       [2, 5]], shape=(3, 2), dtype=int64, device=cpu:0)",
        tostring(dl.arange(6):view{2, 3}:transpose()))
      assert.equal(
        "array([[ 1,  2],\n" ..
        "       [ 5,  6],\n" ..
        "       [ 9, 10]], shape=(3, 2), dtype=int64, device=cpu:0)",
        tostring(dl.arange(12):view{3, 4}:narrow(2, 2, 2)))
    end)
  end)

  describe("for each kind of dtype", function()
    it("prints booleans as true and false", function()
      assert.equal("array([ true, false], shape=(2,), dtype=bool, device=cpu:0)",
        tostring(dl.array{true, false}))
      assert.equal(
        "array([[ true, false],\n" ..
        "       [false,  true]], shape=(2, 2), dtype=bool, device=cpu:0)",
        tostring(dl.array{{true, false}, {false, true}}))
      assert.equal("array(true, shape=(), dtype=bool, device=cpu:0)", tostring(dl.array(true)))
    end)

    it("prints integers of every width, signed and unsigned", function()
      assert.equal("array([-128,  127], shape=(2,), dtype=int8, device=cpu:0)",
        tostring(dl.array({-128, 127}, {dtype = "int8"})))
      assert.equal("array([  1,  -2, 300], shape=(3,), dtype=int32, device=cpu:0)",
        tostring(dl.array({1, -2, 300}, {dtype = "int32"})))
      assert.equal("array([1, 2, 3], shape=(3,), dtype=uint8, device=cpu:0)",
        tostring(dl.array({1, 2, 3}, {dtype = "uint8"})))
      assert.equal("array([18446744073709551615], shape=(1,), dtype=uint64, device=cpu:0)",
        tostring(dl.frombytes(("\255"):rep(8), "uint64")))
    end)

    it("prints integral floats with a trailing dot: 1.", function()
      assert.equal("array([1., 2.], shape=(2,), dtype=float64, device=cpu:0)",
        tostring(dl.array({1, 2}, {dtype = "float64"})))
      assert.equal(
        "array([[1., 1.],\n" ..
        "       [1., 1.]], shape=(2, 2), dtype=float64, device=cpu:0)",
        tostring(dl.ones{2, 2}))
    end)

    it("prints other floats with up to 8 significant digits, right-aligned", function()
      assert.equal("array([1.5,  2.,  3.], shape=(3,), dtype=float64, device=cpu:0)",
        tostring(dl.array{1.5, 2, 3}))
      assert.equal("array([-1.5,   0., 100.], shape=(3,), dtype=float64, device=cpu:0)",
        tostring(dl.array{-1.5, 0, 100}))
      assert.equal("array([0.33333333], shape=(1,), dtype=float64, device=cpu:0)",
        tostring(dl.array{1 / 3}))
      assert.equal("array([  0.1, 1e+10,   -3.], shape=(3,), dtype=float64, device=cpu:0)",
        tostring(dl.array{0.1, 1e10, -3}))
    end)

    it("prints nan, inf and -inf by name", function()
      assert.equal("array([ nan,  inf, -inf], shape=(3,), dtype=float64, device=cpu:0)",
        tostring(dl.array{0 / 0, math.huge, -math.huge}))
    end)

    it("prints float32 without float64 noise: 0.1, not 0.100000001", function()
      assert.equal("array([0.1, 0.2], shape=(2,), dtype=float32, device=cpu:0)",
        tostring(dl.array({0.1, 0.2}, {dtype = "float32"})))
    end)

    it("prints float16 and bfloat16 like the other floats", function()
      assert.equal("array([ 1.5,   2., 0.25], shape=(3,), dtype=float16, device=cpu:0)",
        tostring(dl.array({1.5, 2, 0.25}, {dtype = "float16"})))
      assert.equal("array([0., 0., 0.], shape=(3,), dtype=float16, device=cpu:0)",
        tostring(dl.zeros(3, {dtype = "float16"})))
      assert.equal("array([1., 2.], shape=(2,), dtype=bfloat16, device=cpu:0)",
        tostring(dl.array({1, 2}, {dtype = "bfloat16"})))
    end)

    it("prints complex numbers as 1.+2.j", function()
      assert.equal("array([ 1.+2.j, 0.-1.5j], shape=(2,), dtype=complex128, device=cpu:0)",
        tostring(dl.array{{re = 1, im = 2}, {re = 0, im = -1.5}}))
      assert.equal("array([1.5+0.j, -2.+0.j], shape=(2,), dtype=complex64, device=cpu:0)",
        tostring(dl.array({1.5, -2}, {dtype = "complex64"})))
    end)
  end)

  describe("for large arrays", function()
    it("prints up to 1,000 elements in full", function()
      local s = tostring(dl.arange(1000))
      assert.is_nil(s:find("...", 1, true))
      assert.truthy(s:find("  0,   1,   2,   3,", 1, true))
      assert.truthy(s:find(" 500, 501,", 1, true))
      local head = "array([  0,   1,   2,"
      assert.equal(head, s:sub(1, #head))
      assert.equal(" 998, 999], shape=(1000,), dtype=int64, device=cpu:0)", s:sub(-53))
    end)

    it("summarises above 1,000 elements: first and last 3, with ... between", function()
      assert.equal(
        "array([   0,    1,    2, ...,  998,  999, 1000], shape=(1001,), dtype=int64, device=cpu:0)",
        tostring(dl.arange(1001)))
      assert.equal(
        "array([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,), dtype=int64, device=cpu:0)",
        tostring(dl.arange(2000)))
    end)

    it("summarises every long dimension of a 2-D array", function()
      assert.equal(
        "array([[   0,    1,    2, ...,   47,   48,   49],\n" ..
        "       [  50,   51,   52, ...,   97,   98,   99],\n" ..
        "       [ 100,  101,  102, ...,  147,  148,  149],\n" ..
        "       ...,\n" ..
        "       [1850, 1851, 1852, ..., 1897, 1898, 1899],\n" ..
        "       [1900, 1901, 1902, ..., 1947, 1948, 1949],\n" ..
        "       [1950, 1951, 1952, ..., 1997, 1998, 1999]], shape=(40, 50), dtype=int64, device=cpu:0)",
        tostring(dl.arange(2000):view{40, 50}))
    end)

    it("keeps short dimensions whole when summarising", function()
      assert.equal(
        "array([[[   0,    1,    2, ...,  197,  198,  199],\n" ..
        "        [ 200,  201,  202, ...,  397,  398,  399],\n" ..
        "        [ 400,  401,  402, ...,  597,  598,  599]],\n" ..
        "\n" ..
        "       [[ 600,  601,  602, ...,  797,  798,  799],\n" ..
        "        [ 800,  801,  802, ...,  997,  998,  999],\n" ..
        "        [1000, 1001, 1002, ..., 1197, 1198, 1199]]], shape=(2, 3, 200), dtype=int64, device=cpu:0)",
        tostring(dl.arange(1200):view{2, 3, 200}))
    end)

    it("summarises a 3-D array in every dimension longer than 6", function()
      local s = tostring(dl.zeros{10, 10, 11})
      local row = "[0., 0., 0., ..., 0., 0., 0.]"
      local _, rows = s:gsub(row:gsub("%p", "%%%0"), "")
      assert.equal(6 * 6, rows)                       -- 6 blocks of 6 rows
      local head = "array([[" .. row .. ",\n"
      assert.equal(head, s:sub(1, #head))
      assert.truthy(s:find("]],\n\n       ...,\n\n       [[", 1, true)) -- skipped blocks
      assert.truthy(s:find("],\n        ...,\n        [", 1, true))   -- skipped rows
      assert.equal("]]], shape=(10, 10, 11), dtype=float64, device=cpu:0)", s:sub(-53))
    end)

    it("keeps a million-element array short and never lists every element", function()
      local s = tostring(dl.zeros(10 ^ 6))
      assert.equal("array([0., 0., 0., ..., 0., 0., 0.], shape=(1000000,), dtype=float64, device=cpu:0)", s)
      assert.is_true(#s < 2000)
      local _, elements = s:gsub("0%.", "")
      assert.equal(6, elements)
    end)

    it("prints a big expanded view cheaply: dl.zeros(1):expand{10^7}", function()
      local s = tostring(dl.zeros(1):expand{10 ^ 7})
      assert.equal(
        "array([0., 0., 0., ..., 0., 0., 0.], shape=(10000000,), dtype=float64, device=cpu:0)", s)
    end)

    it("falls back to [...] when even the summary would be too long", function()
      local shape = {}
      for i = 1, 14 do shape[i] = 2 end -- 2^14 elements, no dimension long enough to cut
      local s = tostring(dl.zeros(shape))
      assert.equal("array([...], shape=(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2), "
        .. "dtype=float64, device=cpu:0)", s)
    end)
  end)

  it("is what a script writes with tostring: string.format('%s', tostring(a))", function()
    -- (string.format('%s', a) calls tostring itself on Lua 5.2 and later and
    -- LuaJIT, not on Lua 5.1: spec/lua53/printing_spec.lua)
    local a = dl.array{1, 2}
    assert.equal("a = array([1, 2], shape=(2,), dtype=int64, device=cpu:0)",
                 ("a = %s"):format(tostring(a)))
  end)
end)
