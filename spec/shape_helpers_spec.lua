-- Reshaping and rearranging helpers: NumPy's flatten, ravel, item, tile,
-- repeat, roll, flip and pad.
--
--   a:flatten()                  a 1-D copy, row-major
--   a:ravel()                    1-D: a view when the strides allow, else a copy
--   a:item(), a:item(i), a:item(i, j, ...)   one element as a Lua value
--   dl.tile(a, reps)             a repeated along each dim (reps an integer or a list)
--   dl.repeat_elements(a, repeats, dim)      each element repeated (NumPy's repeat;
--                                `repeat` is a Lua keyword); no dim: a flattened
--   dl.roll(a, shift, dims)      elements shifted round (no dims: a flattened)
--   dl.flip(a, dims)             a view with dims reversed (no dims: every dim)
--   dl.pad(a, widths, {mode =, value =})     a larger array, a in its centre
--
-- Dims are 1-based, negative from the end. Results are new arrays on a's
-- device (flip and, where it can, ravel return views). Sizes that overflow
-- raise SHAPE; negative counts VALUE.
local dl = require "dlbridge"
local support = require "support"
local oracle = require "construct_oracle"
local tb = require "testbackend"

local expect_code = support.expect_code
local ENGINE = "engine_construct" -- memory behind handles: copies only
if not support.registered(ENGINE) then tb.register{name = ENGINE} end

local function m23() return dl.arange(6):view(2, 3) end -- {{0, 1, 2}, {3, 4, 5}}

describe("a:flatten() and a:ravel()", function()
  it("give the elements in row-major order as a 1-D array", function()
    local t = m23():T()
    assert.same({0, 3, 1, 4, 2, 5}, t:flatten():totable())
    assert.same({0, 3, 1, 4, 2, 5}, t:ravel():totable())
  end)

  it("flatten always copies; ravel shares memory when it can", function()
    local a = m23()
    local f, r = a:flatten(), a:ravel()
    a[1][1] = 100
    assert.equal(0, f[1])
    assert.equal(100, r[1])
  end)

  it("ravel of a transposed array is a copy", function()
    local a = m23()
    local r = a:T():ravel()
    a[1][2] = 100
    assert.same({0, 3, 1, 4, 2, 5}, r:totable())
  end)

  it("make a 0-d array 1-D", function()
    assert.same({1}, dl.array(7):flatten().shape)
    assert.same({1}, dl.array(7):ravel().shape)
  end)
end)

describe("a:item()", function()
  it("reads the one element of a one-element array", function()
    assert.equal(7, dl.array{{7}}:item())
    assert.equal(2.5, dl.array(2.5):item())
  end)

  it("takes a flat row-major index or one index per dim (1-based, negative from the end)", function()
    local a = m23()
    assert.equal(4, a:item(5))
    assert.equal(5, a:item(-1))
    assert.equal(3, a:item(2, 1))
  end)

  it("raises SHAPE for a:item() on several elements, INDEX out of range", function()
    expect_code("SHAPE", function() return m23():item() end)
    expect_code("INDEX", function() return m23():item(7) end)
    expect_code("ARGUMENT", function() return dl.zeros{2, 2, 2}:item(1, 1) end)
  end)
end)

describe("dl.tile", function()
  it("repeats the whole array along each dim", function()
    assert.same({0, 1, 2, 0, 1, 2}, dl.tile(dl.arange(3), 2):totable())
    assert.same({2, 3}, dl.tile(dl.arange(3), {2, 1}).shape)
    assert.same({{0, 1, 0, 1}, {0, 1, 0, 1}}, dl.tile(dl.arange(2), {2, 2}):totable())
  end)

  it("pads the shorter of shape and reps with leading 1s (as NumPy)", function()
    assert.same({2, 6}, dl.tile(m23(), 2).shape)
    assert.same({2, 2, 3}, dl.tile(m23(), {2, 1, 1}).shape)
  end)

  it("raises VALUE for negative reps, SHAPE when the size overflows", function()
    expect_code("VALUE", function() return dl.tile(dl.arange(3), -1) end)
    expect_code("SHAPE", function() return dl.tile(dl.arange(3), {2 ^ 62, 2}) end)
  end)

  it("tiles arrays of many dims too", function()
    local shape = {2}
    for d = 2, 32 do shape[d] = 1 end
    local a = dl.arange(2):reshape(shape)
    local reps = {3}
    for d = 2, 32 do reps[d] = 1 end
    local t = dl.tile(a, reps)
    assert.equal(32, t.ndim)
    assert.same({0, 1, 0, 1, 0, 1}, t:flatten():totable())
    assert.same({0, 0, 1, 1}, dl.tile(a, 2):flatten():totable()) -- reps {2} is the last dim
  end)
end)

describe("dl.repeat_elements", function()
  it("repeats each element (NumPy's repeat), flattening without a dim", function()
    assert.same({0, 0, 1, 1, 2, 2}, dl.repeat_elements(dl.arange(3), 2):totable())
    assert.same({0, 2, 2}, dl.repeat_elements(dl.arange(3), {1, 0, 2}):totable())
    assert.same({0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, dl.repeat_elements(m23(), 2):totable())
  end)

  it("repeats along a dim, with one count or one per element", function()
    assert.same({{0, 0, 1, 1, 2, 2}, {3, 3, 4, 4, 5, 5}}, dl.repeat_elements(m23(), 2, 2):totable())
    assert.same({{0, 1, 2}, {3, 4, 5}, {3, 4, 5}}, dl.repeat_elements(m23(), {1, 2}, 1):totable())
    assert.same({3, 3}, dl.repeat_elements(m23(), dl.array{1, 2}, -2).shape)
  end)

  it("raises VALUE for a negative count, SHAPE for the wrong number of counts", function()
    expect_code("VALUE", function() return dl.repeat_elements(dl.arange(3), -1) end)
    expect_code("SHAPE", function() return dl.repeat_elements(dl.arange(3), {1, 2}) end)
    expect_code("INDEX", function() return dl.repeat_elements(m23(), 2, 3) end)
  end)
end)

describe("dl.roll", function()
  it("shifts elements round, flattening without dims", function()
    assert.same({3, 4, 0, 1, 2}, dl.roll(dl.arange(5), 2):totable())
    assert.same({1, 2, 3, 4, 0}, dl.roll(dl.arange(5), -1):totable())
    assert.same({{5, 0, 1}, {2, 3, 4}}, dl.roll(m23(), 1):totable())
  end)

  it("rolls along given dims; shifts and dims pair up", function()
    assert.same({{2, 0, 1}, {5, 3, 4}}, dl.roll(m23(), 1, 2):totable())
    assert.same({{5, 3, 4}, {2, 0, 1}}, dl.roll(m23(), {1, 1}, {1, 2}):totable())
    assert.same({{4, 5, 3}, {1, 2, 0}}, dl.roll(m23(), {1, -1}, {1, -1}):totable())
    assert.same({{2, 0, 1}, {5, 3, 4}}, dl.roll(m23(), -1, {2, -1}):totable()) -- shifts add
    assert.same(m23():totable(), dl.roll(m23(), {}, {}):totable())
  end)

  it("raises SHAPE when shifts and dims do not pair up", function()
    expect_code("SHAPE", function() return dl.roll(m23(), {1, 2}, {1, 2, 1}) end)
  end)
end)

describe("dl.flip", function()
  it("reverses dims in a view (NumPy's flip)", function()
    local a = m23()
    local f = dl.flip(a)
    assert.same({{5, 4, 3}, {2, 1, 0}}, f:totable())
    assert.same({{2, 1, 0}, {5, 4, 3}}, dl.flip(a, 2):totable())
    assert.same({{3, 4, 5}, {0, 1, 2}}, dl.flip(a, {1}):totable())
    a[1][1] = 100
    assert.equal(100, f[2][3])
  end)

  it("raises ARGUMENT for a dim listed twice, INDEX out of range", function()
    expect_code("ARGUMENT", function() return dl.flip(m23(), {1, -2}) end)
    expect_code("INDEX", function() return dl.flip(m23(), 3) end)
  end)
end)

describe("dl.pad", function()
  local row = dl.array{1, 2, 3}

  it("pads with a constant (0 unless value says otherwise)", function()
    assert.same({0, 1, 2, 3, 0}, dl.pad(row, 1):totable())
    assert.same({9, 9, 1, 2, 3, 9}, dl.pad(row, {2, 1}, {value = 9}):totable())
  end)

  it("takes widths as n, {before, after} or one pair per dim", function()
    assert.same({4, 5}, dl.pad(m23(), 1).shape)
    assert.same({5, 6}, dl.pad(m23(), {1, 2}).shape)
    assert.same({2, 5}, dl.pad(m23(), {{0, 0}, {1, 1}}).shape)
    assert.same({4, 3}, dl.pad(m23(), {{1}, {0}}).shape)
  end)

  it("repeats the edge, mirrors or wraps", function()
    assert.same({1, 1, 1, 2, 3, 3}, dl.pad(row, {2, 1}, {mode = "edge"}):totable())
    assert.same({3, 2, 1, 2, 3, 2, 1}, dl.pad(row, 2, {mode = "reflect"}):totable())
    assert.same({2, 1, 1, 2, 3, 3, 2}, dl.pad(row, 2, {mode = "symmetric"}):totable())
    assert.same({2, 3, 1, 2, 3, 1, 2}, dl.pad(row, 2, {mode = "wrap"}):totable())
  end)

  it("raises VALUE for negative widths, a value the dtype cannot hold, or extending an empty dim",
     function()
    expect_code("VALUE", function() return dl.pad(row, -1) end)
    expect_code("VALUE", function() return dl.pad(row, 1, {value = 0.5}) end)
    expect_code("VALUE", function() return dl.pad(dl.zeros{0}, 1, {mode = "edge"}) end)
    expect_code("ARGUMENT", function() return dl.pad(row, 1, {mode = "mirror"}) end)
    expect_code("ARGUMENT", function() return dl.pad(row, 1, {mode = "edge", value = 1}) end)
    expect_code("SHAPE", function() return dl.pad(row, 2 ^ 62) end)
  end)
end)

describe("on a device the host cannot address", function()
  it("works through copies, and the result stays on the device", function()
    local a = m23():to(ENGINE)
    for _, r in ipairs{ dl.tile(a, 2), dl.pad(a, 1, {mode = "reflect"}), dl.roll(a, 1),
                        dl.repeat_elements(a, 2, 1), a:flatten(), dl.flip(a) } do
      assert.equal(ENGINE .. ":0", r.device)
    end
    assert.same(dl.pad(m23(), 2, {mode = "wrap"}):totable(),
                dl.pad(a, 2, {mode = "wrap"}):totable())
    assert.equal(4, a:item(5))
  end)
end)

describe("agrees with NumPy", function()
  it("over random shapes, dtypes and layouts", function()
    local py, cases = oracle.py, oracle.new()
    for _ = 1, 60 do
      local dtype = oracle.pick(oracle.DTYPES)
      local a = oracle.array(dtype, oracle.shape(math.random(0, 3)))
      local reps = math.random(2) == 1 and math.random(0, 3) or oracle.shape(math.random(0, 3))
      cases:add("tile", function() return dl.tile(a, reps) end,
                "np.tile(" .. py(a) .. ", " .. py(reps) .. ")")
      cases:add("flatten", function() return a:flatten() end, py(a) .. ".flatten()")
      cases:add("ravel", function() return a:ravel() end, py(a) .. ".ravel()")
      local dim = a.ndim > 0 and math.random(2) == 1 and math.random(a.ndim) or nil
      local n = dim and a.shape[dim] or a.size
      local counts = math.random(0, 3)
      if math.random(2) == 1 then
        counts = {}
        for i = 1, n do counts[i] = math.random(0, 2) end
      end
      cases:add("repeat", function() return dl.repeat_elements(a, counts, dim) end,
                string.format("np.repeat(%s, np.array(%s, dtype=np.int64), %s)", py(a), py(counts),
                              dim and dim - 1 or "None"))
      local shift, dims = math.random(-7, 7), nil
      if a.ndim > 0 and math.random(2) == 1 then
        dims, shift = {}, {}
        for k = 1, math.random(a.ndim) do dims[k], shift[k] = math.random(a.ndim), math.random(-5, 5) end
      end
      local pydims = "None"
      if dims then
        local z = {}
        for k, d in ipairs(dims) do z[k] = d - 1 end
        pydims = py(z)
      end
      cases:add("roll", function() return dl.roll(a, shift, dims) end,
                string.format("np.roll(%s, %s, %s)", py(a), py(shift), pydims))
      local flips, pyflips = nil, "None"
      if a.ndim > 0 and math.random(2) == 1 then flips, pyflips = math.random(a.ndim), "" end
      if flips then pyflips = tostring(flips - 1) end
      cases:add("flip", function() return dl.flip(a, flips) end,
                string.format("np.flip(%s, %s)", py(a), pyflips))
      local mode = oracle.pick{ "constant", "edge", "reflect", "symmetric", "wrap" }
      local widths = math.random(0, 4)
      if a.ndim > 0 and math.random(2) == 1 then
        widths = {}
        for d = 1, a.ndim do widths[d] = { math.random(0, 5), math.random(0, 5) } end
      end
      cases:add("pad " .. mode, function() return dl.pad(a, widths, {mode = mode}) end,
                string.format("np.pad(%s, %s, mode='%s')", py(a),
                              type(widths) == "table" and py(widths) or tostring(widths), mode))
      if a.size > 0 then
        local k = math.random(a.size)
        cases:add("item", function() return dl.array(a:item(k), {dtype = a.dtype}) end,
                  string.format("np.asarray(%s.item(%d), dtype='%s')", py(a), k - 1, a.dtype))
      end
    end
    assert.same({}, cases:run())
  end)
end)

-- In ctest, DLB_CUDA_DRIVER names the stand-in driver (tests/cuda): its
-- streams run late and poison queued destinations, so a copy that did not
-- wait for the work before it reads wrong bytes.
if support.backend_info("cuda").available then
  describe("on a cuda device", function()
    it("gives the cpu's values, on the device", function()
      local cpu = m23()
      local gpu = cpu:to("cuda:0")
      local calls = {
        function(a) return dl.tile(a, {2, 2}) end,
        function(a) return dl.pad(a, 3, {mode = "reflect"}) end,
        function(a) return dl.pad(a, {{1, 2}, {3, 0}}, {mode = "wrap"}) end,
        function(a) return dl.roll(a, {1, 2}, {1, 2}) end,
        function(a) return dl.repeat_elements(a, {2, 0, 1}, 2) end,
        function(a) return a:T():flatten() end,
        function(a) return dl.flip(a, 2):ravel() end,
      }
      for k, f in ipairs(calls) do
        local want, got = f(cpu), f(gpu)
        assert.equal("cuda:0", got.device, "call " .. k)
        assert.same(want:totable(), got:to("cpu"):totable(), "call " .. k)
      end
      assert.equal(cpu:item(4), gpu:item(4))
    end)
  end)
end
