-- arguments_spec.lua -- how arguments are passed, and that none is ignored.
--
-- Shapes: every function that takes a shape as its last positional
-- argument takes it as one table or as separate integers (the Torch7 and
-- NumPy habit), options last:
--   dl.zeros{2, 3}            dl.zeros(2, 3)           dl.zeros(2, 3, {dtype = "int32"})
--   dl.ones, dl.empty         likewise
--   dl.frombytes(s, "uint8", {2, 3})   or   dl.frombytes(s, "uint8", 2, 3)
--   a:view{3, 2}              a:view(3, 2)             (one -1 is inferred)
--   a:reshape{3, 2}           a:reshape(3, 2)
--   a:expand{4, 3}            a:expand(4, 3)
-- dl.full(shape, value, opts) is the exception: its value follows the shape,
-- so its shape is one table or one integer (dl.full({2, 3}, 7)).
--
-- No argument is silently ignored: a function or method given more
-- arguments than it takes raises ARGUMENT "unexpected argument #n" (counting
-- self for a method), with the function's usage as the hint. A nil counts:
-- pass nothing rather than a trailing nil. a:get and a:set take exactly
-- one index per dimension and raise INDEX for any other count.
--
-- Lists: an argument that takes a list is a plain sequence, keys 1..n and
-- nothing else, no holes, read raw. That holds for every one of them, all
-- checked the same way:
--   shapes            dl.zeros{2, 3}, a:view{3, 2}, dl.zeros_like(a, {shape = {2, 3}})
--   dims              dl.flip(a, {1, 2}), dl.roll(a, shift, {1, 2}), a:sum{dim = {1, 2}}
--   a permutation     a:permute{2, 1}
--   counts, widths    dl.tile(a, {2, 3}), dl.repeat_elements(a, {1, 2, 3}, 1),
--                     dl.pad(a, {{1, 1}, {0, 2}}), dl.roll(a, {1, -2}, {1, 2})
--   arrays to join    dl.concat({a, b}, 1), dl.stack({a, b}, 1)
--   pairs             dl.histogram(a, {range = {0, 1}})
--   data              dl.array{{1, 2}, {3, 4}} and nested tables wherever an
--                     array is taken (at every depth)
-- A table with any other key raises ARGUMENT naming the key (or the hole),
-- with a hint showing the form the argument takes; no key is silently
-- ignored:
--   dl.roll(a, -6, {dim = -1})     ARGUMENT: dims must be a list ..., got a table
--                                  with the key "dim" (hint: ... dl.roll(a, -6, -1))
--   dl.zeros{2, dtype = "int32"}   ARGUMENT (options go in their own table)
--   dl.array{1, nil, 3}            ARGUMENT: ... a hole at 2
-- Options tables ({dim = 1, keepdims = true}) are the other kind of table:
-- named keys, unknown names refused.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code
local unpack = table.unpack or unpack -- Lua 5.1 and LuaJIT have only unpack

describe("a shape given as integers", function()
  it("is the same as the table: dl.zeros(2, 3) == dl.zeros{2, 3}", function()
    assert.same({2, 3}, dl.zeros(2, 3).shape)
    assert.same(dl.zeros{2, 3}:totable(), dl.zeros(2, 3):totable())
    assert.same({4}, dl.zeros(4).shape)
    assert.same({2, 3, 4}, dl.ones(2, 3, 4).shape)
    assert.same({5, 1}, dl.empty(5, 1).shape)
  end)

  it("takes the options table last", function()
    local a = dl.zeros(2, 3, {dtype = "int32"})
    assert.same({2, 3}, a.shape)
    assert.equal("int32", a.dtype)
    assert.equal(1, dl.ones(2, 2, {dtype = "uint8"}):get(2, 2))
    assert.same({2}, dl.zeros(2, nil).shape) -- nil options are no options
  end)

  it("works for view, reshape and expand, with one -1 inferred", function()
    local a = dl.arange(6)
    assert.same({3, 2}, a:view(3, 2).shape)
    assert.same({{0, 1}, {2, 3}, {4, 5}}, a:view(3, 2):totable())
    assert.same({2, 3}, a:reshape(-1, 3).shape)
    assert.same({6}, a:view(3, 2):reshape(6).shape)
    assert.same({4, 3}, dl.zeros(1, 3):expand(4, 3).shape)
    assert.same({4, 3}, dl.zeros(1, 3):expand(4, -1).shape)
  end)

  it("works for dl.frombytes, after the dtype", function()
    local img = dl.frombytes("\1\2\3\4\5\6", "uint8", 2, 3)
    assert.same({{1, 2, 3}, {4, 5, 6}}, img:totable())
    assert.same({3, 2}, dl.frombytes("\1\2\3\4\5\6", "uint8", 3, 2, {device = "cpu"}).shape)
  end)

  it("reads every integer: a:view(6, 99) is the shape {6, 99}, not {6}", function()
    local a = dl.arange(6)
    local err = expect_code("SHAPE", a.view, a, 6, 99)
    assert.matches("594", err.message) -- 6 * 99 elements asked for
  end)

  it("holds integers only: a fraction is SHAPE, anything else ARGUMENT", function()
    expect_code("SHAPE", dl.zeros, 2, 3.5)
    expect_code("SHAPE", dl.zeros, 2, -3)
    local a = dl.arange(6)
    expect_code("ARGUMENT", a.view, a, 3, "2")
    expect_code("ARGUMENT", a.view, a, 3, nil) -- a nil among the integers is no shape entry
    expect_code("ARGUMENT", dl.zeros, 2, 3, "int32") -- options go in a table
  end)

  it("is one form or the other: a table and then integers is ARGUMENT", function()
    expect_code("ARGUMENT", dl.zeros, {2}, 3)
    local a = dl.arange(6)
    expect_code("ARGUMENT", a.view, a, {3}, 2)
  end)

  it("has at most 32 dimensions in either form", function()
    local ones = {}
    for d = 1, 33 do ones[d] = 1 end
    expect_code("SHAPE", dl.zeros, unpack(ones))
    expect_code("SHAPE", dl.zeros, ones)
    table.remove(ones)
    assert.equal(32, dl.zeros(unpack(ones)).ndim)
  end)

  it("is not taken by dl.full, whose value follows the shape", function()
    assert.same({2, 3}, dl.full({2, 3}, 7).shape)
    assert.same({2}, dl.full(2, 3).shape) -- shape {2}, value 3
    expect_code("ARGUMENT", dl.full, 2, 3, 7) -- 7 is no options table
  end)
end)

-- Valid arguments for every public function, filling every slot it takes
-- (options included), so that one more argument is one too many.
local function floats() return dl.array{0.25, 0.5} end
local function ints() return dl.array{1, 2} end
local function matrix() return dl.array({{1, 2}, {3, 4}}, {dtype = "float64"}) end

local UNARY = {"abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "exp", "exp2", "expm1",
  "floor", "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2", "logical_not", "neg",
  "negative", "round", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"}
local INT_UNARY = {"bitwise_not", "invert"}
local BINARY = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "floor_divide", "mod",
  "pow", "power", "maximum", "minimum", "atan2", "logical_and", "logical_or", "logical_xor",
  "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
local INT_BINARY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
local COMPARISON_METHODS = {"eq", "ne", "lt", "le", "gt", "ge"}
local REDUCTIONS = {"sum", "prod", "mean", "min", "max", "argmin", "argmax", "all", "any",
  "count_nonzero", "std", "var", "nansum", "nanprod", "nanmean", "nanmin", "nanmax", "nanargmin",
  "nanargmax", "nanstd", "nanvar"}

-- A scratch file for dl.save and dl.load, removed when this file's tests end.
local npy_path = os.tmpname()
teardown(function() os.remove(npy_path) end)

-- dl.NAME(args...)
local functions = {
  array = function() return {{1, 2}, {}} end,
  zeros = function() return {2, 3, {}} end,
  ones = function() return {2, 3, {}} end,
  empty = function() return {2, 3, {}} end,
  full = function() return {{2}, 7, {}} end,
  arange = function() return {0, 10, 2, {}} end,
  linspace = function() return {0, 1, 5, {}} end,
  frombytes = function() return {"\1\2", "uint8", 2, {}} end,
  is_array = function() return {floats()} end,
  is_error = function() return {floats()} end,
  pairs = function() return {floats()} end,
  dtypes = function() return {} end,
  memory = function() return {} end,
  readonly = function() return {{}} end,
  backends = function() return {} end,
  device_put = function() return {floats(), "cpu", {}} end,
  synchronize = function() return {"cpu"} end,
  from_dlpack = function() return {floats(), {}} end,
  save = function() return {npy_path, floats()} end,
  load = function() dl.save(npy_path, floats()) return {npy_path, {}} end,
  tonpy = function() return {floats()} end,
  fromnpy = function() return {dl.tonpy(floats()), {}} end,
  -- (the safetensors functions use the same scratch file)
  save_safetensors = function() return {npy_path, {x = floats()}, {k = "v"}} end,
  load_safetensors = function()
    dl.save_safetensors(npy_path, {x = floats()})
    return {npy_path, {}}
  end,
  tosafetensors = function() return {{x = floats()}, {k = "v"}} end,
  fromsafetensors = function() return {dl.tosafetensors{x = floats()}, {}} end,
  matmul = function() return {matrix(), matrix(), {}} end,
  dot = function() return {floats(), floats()} end,
  concat = function() return {{floats(), floats()}, 1} end,
  stack = function() return {{floats(), floats()}, 1} end,
  where = function() return {dl.array{true, false}, floats(), floats(), {}} end,
  clip = function() return {floats(), 0, 1, {}} end,
  -- selecting, sorting, scanning, counting
  take = function() return {floats(), {1}, {}} end,
  take_along_dim = function() return {floats(), {1}, 1} end,
  put_along_dim = function() return {floats(), {1}, 0, 1} end,
  scatter_add = function() return {floats(), {1}, 1, {dim = 1}} end,
  scatter_mul = function() return {floats(), {1}, 1, {dim = 1}} end,
  scatter_max = function() return {floats(), {1}, 1, {dim = 1}} end,
  scatter_min = function() return {floats(), {1}, 1, {dim = 1}} end,
  nonzero = function() return {floats()} end,
  argwhere = function() return {floats()} end,
  sort = function() return {floats(), {}} end,
  argsort = function() return {floats(), {}} end,
  topk = function() return {floats(), 1, {}} end,
  unique = function() return {floats(), {}} end,
  isin = function() return {floats(), floats(), {}} end,
  lexsort = function() return {{floats(), floats()}} end,
  searchsorted = function() return {floats(), 0.3, {}} end,
  median = function() return {floats(), {}} end,
  nanmedian = function() return {floats(), {}} end,
  quantile = function() return {floats(), 0.5, {}} end,
  nanquantile = function() return {floats(), 0.5, {}} end,
  percentile = function() return {floats(), 50, {}} end,
  nanpercentile = function() return {floats(), 50, {}} end,
  cumsum = function() return {floats(), {}} end,
  cumprod = function() return {floats(), {}} end,
  diff = function() return {floats(), {}} end,
  bincount = function() return {ints(), {}} end,
  histogram = function() return {floats(), {}} end,
  -- vector math
  cross = function() return {dl.array{1, 2, 3}, dl.array{4, 5, 6}} end,
  outer = function() return {floats(), floats()} end,
  norm = function() return {floats(), {}} end,
  interp = function() return {floats(), {0, 1}, {0, 1}, {}} end,
  -- construction, shape and comparison helpers
  eye = function() return {3, 3, {}} end,
  identity = function() return {3, {}} end,
  zeros_like = function() return {floats(), {}} end,
  ones_like = function() return {floats(), {}} end,
  empty_like = function() return {floats(), {}} end,
  full_like = function() return {floats(), 1, {}} end,
  logspace = function() return {0, 2, 5, {}} end,
  tile = function() return {floats(), 2} end,
  repeat_elements = function() return {floats(), 2, 1} end,
  roll = function() return {floats(), 1, 1} end,
  flip = function() return {floats(), 1} end,
  pad = function() return {floats(), 1, {}} end,
  convolve = function() return {floats(), floats(), {}} end,
  isclose = function() return {floats(), floats(), {}} end,
  allclose = function() return {floats(), floats(), {}} end,
  array_equal = function() return {floats(), floats(), {}} end,
}
-- a:NAME(args...): self first.
local methods = {
  T = function() return {matrix()} end,
  astype = function() return {floats(), "float32"} end,
  contiguous = function() return {floats()} end,
  copy = function() return {floats()} end,
  copy_from = function() return {floats(), 0} end,
  delete = function() return {floats()} end,
  fill = function() return {floats(), 0} end,
  is_contiguous = function() return {floats()} end,
  expand = function() return {dl.zeros{1}, {3}} end,
  view = function() return {floats(), {2}} end,
  reshape = function() return {floats(), {2}} end,
  transpose = function() return {matrix(), 1, 2} end,
  permute = function() return {matrix(), {2, 1}} end,
  narrow = function() return {floats(), 1, 1, 1} end,
  select = function() return {matrix(), 1, 1} end,
  slice = function() return {floats(), 1, 1, 2, 1} end,
  squeeze = function() return {dl.zeros{1, 2}, 1} end,
  unsqueeze = function() return {floats(), 1} end,
  to = function() return {floats(), "cpu", {}} end,
  tobytes = function() return {floats()} end,
  totable = function() return {floats()} end,
  matmul = function() return {matrix(), matrix(), {}} end,
  dot = function() return {floats(), floats()} end,
  clip = function() return {floats(), 0, 1, {}} end,
  to_dlpack = function() return {floats(), {}} end,
  __dlpack = function() return {floats(), {}} end,
  __dlpack_device = function() return {floats()} end,
  take = function() return {floats(), {1}, {}} end,
  nonzero = function() return {floats()} end,
  sort = function() return {floats(), {}} end,
  argsort = function() return {floats(), {}} end,
  topk = function() return {floats(), 1, {}} end,
  searchsorted = function() return {floats(), 0.3, {}} end,
  cumsum = function() return {floats(), {}} end,
  cumprod = function() return {floats(), {}} end,
  flatten = function() return {floats()} end,
  ravel = function() return {floats()} end,
  item = function() return {floats(), 1} end,
}
for _, name in ipairs(UNARY) do
  functions[name] = function() return {floats(), {}} end
  methods[name] = functions[name]
end
for _, name in ipairs(INT_UNARY) do
  functions[name] = function() return {ints(), {}} end
  methods[name] = functions[name]
end
for _, name in ipairs(BINARY) do
  functions[name] = function() return {floats(), floats(), {}} end
  methods[name] = functions[name]
end
for _, name in ipairs(INT_BINARY) do
  functions[name] = function() return {ints(), ints(), {}} end
  methods[name] = functions[name]
end
for _, name in ipairs(COMPARISON_METHODS) do
  methods[name] = function() return {floats(), floats(), {}} end
end
for _, name in ipairs(REDUCTIONS) do
  functions[name] = function() return {floats(), {}} end
  methods[name] = functions[name]
end

-- Not in the catalogue, and why.
local exempt = {
  try = "dl.try(f, ...) passes any arguments on to f",
  scope = "dl.scope(f, ...) passes any arguments on to f",
  ptr = "a:ptr() needs LuaJIT's FFI (UNSUPPORTED elsewhere): its surplus argument is tested below",
  traceback = "a message handler: xpcall gives it exactly one argument",
  get = "takes one index per dimension: another count is INDEX (tested below)",
  set = "takes one index per dimension and a value: another count is INDEX (tested below)",
  meshgrid = "takes any number of inputs",
  einsum = "takes any number of operands after its subscripts",
}


describe("the catalogue of valid calls", function()
  it("covers every function of the module", function()
    for name, value in pairs(dl) do
      if type(value) == "function" then
        assert.is_truthy(functions[name] or exempt[name], "no catalogue entry for dl." .. name)
      end
    end
  end)

  it("covers every method of Array", function()
    -- (support.ARRAY_METHODS: checked complete in spec/lua53/arguments_spec.lua)
    local a = dl.zeros(1)
    for _, name in ipairs(support.ARRAY_METHODS) do
      assert.is_function(a[name], "a:" .. name .. " is no method")
      assert.is_truthy(methods[name] or exempt[name], "no catalogue entry for a:" .. name)
    end
  end)

  it("holds calls that succeed", function()
    for name, args in pairs(functions) do
      local a = args()
      local ok, err = pcall(dl[name], unpack(a, 1, #a))
      assert.is_true(ok, "dl." .. name .. ": " .. tostring(err))
    end
    for name, args in pairs(methods) do
      local a = args()
      local ok, err = pcall(a[1][name], unpack(a, 1, #a))
      assert.is_true(ok, "a:" .. name .. ": " .. tostring(err))
    end
  end)
end)

describe("one argument too many", function()
  -- Each call of the catalogue with one more argument: ARGUMENT, naming the
  -- position, with the function's usage as the hint.
  local function check(label, f, args)
    local n = #args
    args[n + 1] = "surplus"
    local err = expect_code("ARGUMENT", f, unpack(args, 1, n + 1))
    assert.matches("unexpected argument #" .. (n + 1) .. " %(string", err.message, label)
    assert.is_string(err.hint)
  end

  for name, args in pairs(functions) do
    it("raises ARGUMENT from dl." .. name, function()
      check("dl." .. name, dl[name], args())
    end)
  end

  for name, args in pairs(methods) do
    it("raises ARGUMENT from a:" .. name, function()
      local a = args()
      check("a:" .. name, a[1][name], a)
    end)
  end

  it("raises ARGUMENT from a:ptr, on every Lua", function()
    local a = dl.zeros(2)
    local err = expect_code("ARGUMENT", a.ptr, a, "surplus")
    assert.matches("unexpected argument #2 %(string", err.message)
  end)

  it("a nil counts as an argument: pass nothing rather than nil", function()
    local a = dl.zeros(2)
    expect_code("ARGUMENT", a.copy, a, nil)
    expect_code("ARGUMENT", dl.sum, a, nil, nil)
  end)

  it("counts self for a method, and says so", function()
    local a = dl.arange(4)
    -- (not `return a:sum(...)`: LuaJIT's tail calls leave no trace of the call's form)
    local err = expect_code("ARGUMENT", function() local s = a:sum({dim = 1}, 5); return s end)
    assert.matches("unexpected argument #3 %(number; self is #1%)", err.message)
    err = expect_code("ARGUMENT", dl.sum, a, {dim = 1}, 5)
    assert.matches("unexpected argument #3 %(number%)", err.message)
  end)

  it("reports a bad self before an extra argument", function()
    local a = dl.arange(4)
    for _, name in ipairs{"copy", "slice", "transpose", "squeeze"} do
      local method = a[name]
      local err = expect_code("ARGUMENT", method, 5, 1, 1, 1, 1, 1)
      assert.matches("argument #1: dlbridge.Array expected, got number", err.message, name)
      err = expect_code("ARGUMENT", method)
      assert.matches("argument #1: dlbridge.Array expected, got no value", err.message, name)
      err = expect_code("ARGUMENT", method, a, 1, 1, 1, 1, 1)
      assert.matches("unexpected argument", err.message, name)
    end
  end)

  it("a view of a deleted array is DELETED, whatever follows", function()
    local deleted = dl.arange(4)
    deleted:delete()
    expect_code("DELETED", deleted.slice, deleted, 1, 1, 2)
    expect_code("DELETED", deleted.slice, deleted, 1, 1, 2, 1, 9)
    expect_code("DELETED", deleted.transpose, deleted, 1, 1, 9)
  end)

  it("the error object's method err:is also refuses a second argument", function()
    local err = expect_code("SHAPE", dl.zeros, -1)
    expect_code("ARGUMENT", err.is, err, "SHAPE", "VALUE")
  end)

  it("a:get and a:set take one index per dimension: another count is INDEX", function()
    local m = dl.zeros(2, 3)
    expect_code("INDEX", m.get, m, 1, 1, 1)
    expect_code("INDEX", m.get, m, 1)
    expect_code("INDEX", m.set, m, 1, 1, 1, 0)
  end)

  it("operators take their two operands and need no check", function()
    local a = dl.array{1, 2}
    assert.same({2, 4}, (a + a):totable())
    assert.same({-1, -2}, (-a):totable())
  end)
end)

describe("a list argument", function()
  local a = dl.arange(10)
  local m = dl.arange(6):view(2, 3)

  it("is a sequence: keys 1..n, no holes, nothing else", function()
    assert.same({2, 3}, dl.zeros{2, 3}.shape)
    assert.same({6, 7, 8, 9, 0, 1, 2, 3, 4, 5}, dl.roll(a, -6, {1}):totable())
    assert.same({{2, 1, 0}, {5, 4, 3}}, dl.flip(m, {2}):totable())
    assert.same({3, 5, 7}, m:sum{dim = {1}}:totable())
    assert.same({3, 2}, m:permute{2, 1}.shape)
    assert.same({}, dl.zeros{}.shape) -- the empty list: a 0-d array
    assert.same({{1, 2}, {3, 4}}, dl.array{{1, 2}, {3, 4}}:totable())
  end)

  it("is no options table: dl.roll(a, -6, {dim = -1}) is ARGUMENT, not a roll of nothing", function()
    local err = expect_code("ARGUMENT", dl.roll, a, -6, {dim = -1})
    assert.matches('dims must be a list', err.message, 1, true)
    assert.matches('the key "dim"', err.message, 1, true)
    assert.matches("{1, 2}", err.hint, 1, true) -- the form a list of dims takes
    assert.matches("dl.roll(a, -6, -1)", err.hint, 1, true) -- and the call meant
    assert.same({6, 7, 8, 9, 0, 1, 2, 3, 4, 5}, dl.roll(a, -6, -1):totable())
  end)

  it("refuses a named key among the entries: {2, dtype = 'int32'} is no shape {2}", function()
    local err = expect_code("ARGUMENT", dl.zeros, {2, dtype = "int32"})
    assert.matches('the key "dtype"', err.message, 1, true)
    assert.matches("options follow in their own table", err.hint, 1, true)
  end)

  it("refuses holes, and keys below 1, above n, fractional or of other types", function()
    local err = expect_code("ARGUMENT", dl.zeros, {2, nil, 3})
    assert.matches("a hole at 2", err.message, 1, true)
    err = expect_code("ARGUMENT", dl.zeros, {2, [4] = 3})
    assert.matches("a hole at 2", err.message, 1, true)
    err = expect_code("ARGUMENT", dl.zeros, {[0] = 1, 2})
    assert.matches("the key 0", err.message, 1, true)
    expect_code("ARGUMENT", dl.zeros, {2, [-1] = 3})
    expect_code("ARGUMENT", dl.zeros, {2, [1.5] = 3})
    expect_code("ARGUMENT", dl.zeros, {2, [true] = 3})
  end)

  it("is checked wherever a shape is taken", function()
    local bad = {2, x = 1}
    expect_code("ARGUMENT", dl.zeros, bad)
    expect_code("ARGUMENT", dl.ones, bad)
    expect_code("ARGUMENT", dl.empty, bad)
    expect_code("ARGUMENT", dl.full, bad, 7)
    expect_code("ARGUMENT", dl.frombytes, "\1\2", "uint8", bad)
    expect_code("ARGUMENT", dl.zeros_like, a, {shape = bad})
    expect_code("ARGUMENT", a.view, a, {10, x = 1})
    expect_code("ARGUMENT", a.reshape, a, {10, x = 1})
    expect_code("ARGUMENT", dl.zeros(1).expand, dl.zeros(1), {3, x = 1})
    local rng = dl.random.default_rng(1)
    expect_code("ARGUMENT", rng.random, rng, bad)
  end)

  it("is checked wherever dims are taken: flip, roll, reductions, permute", function()
    expect_code("ARGUMENT", dl.flip, m, {dim = 1})
    expect_code("ARGUMENT", dl.flip, m, {1, x = 2})
    expect_code("ARGUMENT", dl.roll, m, 1, {1, x = 2})
    expect_code("ARGUMENT", m.sum, m, {dim = {x = 2}})       -- not an empty list: no dims
    expect_code("ARGUMENT", m.sum, m, {dim = {1, x = 2}})
    expect_code("ARGUMENT", dl.mean, m, {dim = {1, nil, 2}})
    expect_code("ARGUMENT", m.max, m, {dim = {[2] = 1}})
    expect_code("ARGUMENT", m.permute, m, {2, 1, x = 3})
    expect_code("ARGUMENT", m.permute, m, {[2] = 1, [3] = 2})
  end)

  it("is checked for counts, widths, shifts, the arrays to join and pairs", function()
    expect_code("ARGUMENT", dl.tile, a, {2, x = 1})
    expect_code("ARGUMENT", dl.repeat_elements, dl.arange(3), {1, 2, 3, x = 1}, 1)
    expect_code("ARGUMENT", dl.roll, a, {1, x = 1})
    expect_code("ARGUMENT", dl.pad, a, {1, 2, x = 1})
    expect_code("ARGUMENT", dl.pad, a, {{1, 2, x = 1}})
    expect_code("ARGUMENT", dl.concat, {a, a, x = a}, 1)
    expect_code("ARGUMENT", dl.stack, {a, nil, a}, 1)
    expect_code("ARGUMENT", dl.histogram, a, {range = {0, 1, x = 2}})
  end)

  it("is the rule for dl.array's nested tables too, at every depth", function()
    local err = expect_code("ARGUMENT", dl.array, {1, nil, 3})
    assert.matches("a hole at 2", err.message, 1, true)
    expect_code("ARGUMENT", dl.array, {1, 2, x = 3})
    expect_code("ARGUMENT", dl.array, {{1, 2}, {3, 4, x = 5}})
    expect_code("ARGUMENT", dl.array, {{}, {x = 1}})
    expect_code("ARGUMENT", dl.take, a, {1, 2, x = 3})
    expect_code("ARGUMENT", a.to_dlpack, a, {max_version = {1, 1, x = 1}})
    expect_code("ARGUMENT", dl.random.default_rng, {1, 2, x = 3})
    -- however the table was built: here the named keys come first, and the
    -- entries may share the table's hash part with them
    for n = 1, 6 do
      local t = {x = 1, y = 2, z = 3}
      for i = 1, n do t[i] = i end
      expect_code("ARGUMENT", dl.array, t)
      t.x, t.y, t.z = nil, nil, nil
      assert.same(n, dl.array(t).size) -- without them it is a list
    end
  end)

  it("hints at the form the argument takes", function()
    for _, case in ipairs{
      {dl.flip, m, {x = 1}},
      {dl.tile, a, {2, x = 1}},
      {dl.pad, a, {1, x = 1}},
      {m.sum, m, {dim = {x = 1}}},
      {m.permute, m, {2, 1, x = 3}},
      {dl.concat, {a, x = a}},
      {dl.array, {1, x = 2}},
    } do
      local err = expect_code("ARGUMENT", unpack(case))
      assert.matches("must be a list", err.message, 1, true)
      assert.matches("{", err.hint, 1, true)
    end
  end)
end)
