-- Element-wise math functions.
--
-- This file documents:
--   dl.sqrt(a, opts)   a:sqrt(opts)   and likewise exp exp2 expm1 log log2 log10 log1p
--                      sin cos tan asin acos atan sinh cosh tanh
--   dl.atan2(y, x, opts)               the angle of the point (x, y), in (-pi, pi]
--   dl.floor ceil trunc round          round: half to even (NumPy's rint)
--   dl.abs(a)   dl.sign(a)             abs of a complex array is a real array
--   dl.isnan isinf isfinite            bool arrays
--   opts = {out = b}                   writes the result into b (b may be a: in place)
-- Result dtypes follow NumPy: float and complex arrays keep their dtype; integer and
-- bool arrays compute in float16 (bool, int8, uint8), float32 (int16, uint16) or
-- float64 (wider). The rounding functions, abs and sign keep integer dtypes.
-- float32/float64 functions are within 1 ulp of the exact result (SLEEF's vector
-- functions where the CPU has AVX2 or AVX-512, else libm).
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

-- got is want to within rel (relative; absolute near 0).
local function close(want, got, rel)
  rel = rel or 1e-15
  return math.abs(got - want) <= rel * math.max(math.abs(want), 1e-300)
end

local function is_nan(x) return x ~= x end
local function is_negative_zero(x) return x == 0 and 1 / x < 0 end
-- -0.0, computed: Lua 5.1 may fold a literal -0.0 into a constant 0 of the same function
local NEGATIVE_ZERO = -1 / math.huge
-- float64 arrays, whatever the Lua: on Lua 5.1, 5.2 and LuaJIT dl.array{-0.0} is int64
local function floats(values) return dl.array(values, {dtype = "float64"}) end

describe("float functions", function()
  it("work as functions and as methods", function()
    local a = dl.array{1, 4, 9}
    assert.same({1, 2, 3}, dl.sqrt(a):totable())
    assert.same({1, 2, 3}, a:sqrt():totable())
    assert.same({0, 1, 2}, dl.array{1, 2, 4}:log2():totable())
  end)

  it("give NumPy's values (float64)", function()
    -- expected values: NumPy 1.24, np.f(np.array([0.5, 2.0])) (asin, acos: [0.5, -0.25]).
    -- On AVX-512 machines NumPy takes these from SVML, within 4 ulps of the exact
    -- value (cos(0.5) is 2 ulps below it there); dlbridge is within 1 ulp.
    local expected = {
      sqrt = {0.7071067811865476, 1.4142135623730951},
      exp = {1.6487212707001282, 7.38905609893065},
      exp2 = {1.4142135623730951, 4.0},
      expm1 = {0.6487212707001282, 6.38905609893065},
      log = {-0.6931471805599453, 0.6931471805599453},
      log2 = {-1.0, 1.0},
      log10 = {-0.3010299956639812, 0.3010299956639812},
      log1p = {0.4054651081081644, 1.0986122886681096},
      sin = {0.47942553860420295, 0.9092974268256816},
      cos = {0.8775825618903725, -0.4161468365471424},
      tan = {0.5463024898437905, -2.185039863261519},
      asin = {0.5235987755982989, -0.25268025514207865},
      acos = {1.0471975511965976, 1.8234765819369751},
      atan = {0.4636476090008061, 1.1071487177940904},
      sinh = {0.5210953054937474, 3.6268604078470186},
      cosh = {1.1276259652063807, 3.7621956910836314},
      tanh = {0.46211715726000974, 0.9640275800758169},
    }
    for name, want in pairs(expected) do
      local x = (name == "asin" or name == "acos") and dl.array{0.5, -0.25} or dl.array{0.5, 2.0}
      local got = dl[name](x):totable()
      for i = 1, 2 do
        assert.is_true(close(want[i], got[i], 1e-15), -- 5 ulps
                       ("%s(%s): %.17g, NumPy %.17g"):format(name, x[i], got[i], want[i]))
      end
    end
  end)

  it("keep float32 arrays float32, within 1 ulp", function()
    local r = dl.array({1, 2}, {dtype = "float32"}):exp()
    assert.equal("float32", r.dtype)
    -- the float32 nearest e is 2.71828174591064453125; 1 ulp there is 2^-22
    assert.is_true(math.abs(r[1] - 2.7182818284590451) <= 2 ^ -22)
    assert.equal(1.4142135381698608, dl.array({2}, {dtype = "float32"}):sqrt()[1]) -- rounded once
  end)

  it("give float results for integer and bool arrays, as NumPy picks them", function()
    local function dtype_of(dtype) return dl.sqrt(dl.array({1, 4}, {dtype = dtype})).dtype end
    assert.equal("float16", dtype_of("int8"))
    assert.equal("float16", dtype_of("uint8"))
    assert.equal("float32", dtype_of("int16"))
    assert.equal("float64", dtype_of("int32"))
    assert.equal("float64", dtype_of("int64"))
    assert.equal("float16", dl.sqrt(dl.array{true, false}).dtype)
    assert.equal("float16", dtype_of("float16"))    -- computed in float32, rounded once
    assert.equal("bfloat16", dtype_of("bfloat16"))
    assert.same({1, 2}, dl.sqrt(dl.array({1, 4}, {dtype = "int32"})):totable())
  end)

  it("write into an out array, which may be the input", function()
    local a = dl.array({1, 4, 9}, {dtype = "float32"})
    local b = dl.empty({3}, {dtype = "float32"})
    assert.equal(b, dl.sqrt(a, {out = b}))          -- returns out itself
    assert.same({1, 2, 3}, b:totable())
    a:sqrt{out = a}                                 -- in place
    assert.same({1, 2, 3}, a:totable())
    local c = dl.zeros{3}                           -- a float64 out takes a float32 result
    dl.exp(dl.zeros({3}, {dtype = "float32"}), {out = c})
    assert.same({1, 1, 1}, c:totable())
  end)

  it("follow views (transposed, reversed, broadcast) element by element", function()
    local m = dl.array{{1, 4}, {9, 16}}
    assert.same({{1, 3}, {2, 4}}, m:transpose():sqrt():totable())
    assert.same({{2, 3}, {2, 3}}, dl.array{4, 9}:expand{2, 2}:sqrt():totable())
    assert.same({0, 2}, dl.array{100, 10, 1}:slice(1, -1, 1, -2):log10():totable()) -- {1, 100}
  end)

  it("give IEEE special values: NaN outside the domain, inf at poles and overflow", function()
    local inf = math.huge
    local s = dl.array{-1, 0, inf}:sqrt():totable()
    assert.is_true(is_nan(s[1]))
    assert.same({0, inf}, {s[2], s[3]})
    local l = dl.array{0, -1, inf}:log():totable()
    assert.equal(-inf, l[1])
    assert.is_true(is_nan(l[2]))
    assert.equal(inf, l[3])
    assert.same({0, 1, inf}, dl.array{-inf, 0, 1000}:exp():totable())
    assert.is_true(is_nan(dl.array{inf}:sin()[1]))
    assert.same({-1, 1}, dl.array{-inf, inf}:tanh():totable())
    local sinh32 = dl.array({89, 90}, {dtype = "float32"}):sinh():totable()
    assert.is_true(close(2.2448063889081578e+38, sinh32[1], 2 ^ -23)) -- near FLT_MAX, finite
    assert.equal(inf, sinh32[2])                                      -- beyond float32
    assert.is_true(is_negative_zero(floats{NEGATIVE_ZERO}:sin()[1])) -- sign of zero kept
  end)

  it("work on complex arrays (NumPy's results; the dtype is kept)", function()
    -- NumPy 1.24: np.f(np.array([0.5+1j, -2+0.5j]))
    local z = dl.array{{re = 0.5, im = 1}, {re = -2, im = 0.5}}
    local expected = {
      sqrt = {{0.8994537199739336, 0.5558929702514211}, {0.17543205637629383, 1.425053124063947}},
      exp = {{0.8908079042931287, 1.3873511113297634}, {0.11876788457694579, 0.06488319105786541}},
      exp2 = {{1.0878680870139088, 0.9036277027939649}, {0.23513552617081096, 0.08491928127566713}},
      expm1 = {{-0.10919209570687133, 1.3873511113297634},
               {-0.8812321154230542, 0.06488319105786541}},
      log = {{0.11157177565710488, 1.1071487177940904}, {0.7234594914681627, 2.896613990462929}},
      log2 = {{0.16096404744368117, 1.5972779646881086}, {1.0437314206251695, 4.178930639410458}},
      log10 = {{0.04845500650402821, 0.4808285787842341},
               {0.31419446502515574, 1.2579834722618084}},
      log1p = {{0.589327498170823, 0.5880026035475675}, {0.11157177565710492, 2.677945044588987}},
      sin = {{0.7397922644560138, 1.0313360742545512}, {-1.0253473885839877, -0.21685216292078974}},
      cos = {{1.3541806567045842, -0.5634214652309818}, {-0.4692579782290534, 0.473830620416407}},
      tan = {{0.195577310065934, 0.8429662048457833}, {0.8508781211449378, 1.3212865837711916}},
      asin = {{0.34943906285721327, 0.9261330313501825}, {-1.2930420702371825, 1.3618009008578458}},
      acos = {{1.2213572639376833, -0.9261330313501825}, {2.863838397032079, -1.3618009008578458}},
      atan = {{0.9078874949608804, 0.708303336014054}, {-1.1265564408348223, 0.09641562020299617}},
      sinh = {{0.28154899513533443, 0.948864531437168}, {-3.1828694483371494, 1.8036926955321817}},
      cosh = {{0.6092589091577942, 0.4384865798925953}, {3.3016373329140944, -1.7388095044743164}},
      tanh = {{1.0428307283443607, 0.806877412163085}, {-0.979940849961738, 0.03021598732287757}},
    }
    for name, want in pairs(expected) do
      local r = dl[name](z)
      assert.equal("complex128", r.dtype)
      local got = r:totable()
      for i = 1, 2 do
        local ok = close(want[i][1], got[i].re, 1e-14) and close(want[i][2], got[i].im, 1e-14)
        assert.is_true(ok, ("%s: %.17g%+.17gj, NumPy %.17g%+.17gj"):format(
          name, got[i].re, got[i].im, want[i][1], want[i][2]))
      end
    end
    assert.equal("complex64", dl.array({{re = 1, im = 1}}, {dtype = "complex64"}):exp().dtype)
    local r = dl.array{{re = -4, im = 0}}:sqrt()[1]   -- the principal root: 2j
    assert.same({0, 2}, {r.re, r.im})
  end)
end)

describe("dl.atan2(y, x)", function()
  it("gives the angle of (x, y) in each quadrant", function()
    local y, x = dl.array{1, 1, -1, -1}, dl.array{1, -1, -1, 1}
    local got = dl.atan2(y, x):totable()
    local quarter = math.pi / 4
    for i, k in ipairs{1, 3, -3, -1} do assert.is_true(close(k * quarter, got[i])) end
  end)

  it("broadcasts its operands and takes Lua numbers", function()
    local got = dl.atan2(dl.array{0, 1}, 1):totable()     -- int64 array: float64 result
    assert.equal(0, got[1])
    assert.is_true(close(math.pi / 4, got[2]))
    assert.equal("float32", dl.atan2(dl.zeros({2}, {dtype = "float32"}), 1.0).dtype)
  end)

  it("keeps the signs of zeros (C99: atan2(0, -0) is pi)", function()
    local got = dl.atan2(floats{0, NEGATIVE_ZERO}, floats{NEGATIVE_ZERO, NEGATIVE_ZERO}):totable()
    assert.same({math.pi, -math.pi}, got)
  end)
end)

describe("rounding: floor, ceil, trunc, round", function()
  it("round down, up, toward zero and to nearest", function()
    local a = dl.array{-1.5, -0.5, 0.5, 1.7}
    assert.same({-2, -1, 0, 1}, a:floor():totable())
    assert.same({-1, 0, 1, 2}, a:ceil():totable())
    assert.same({-1, 0, 0, 1}, a:trunc():totable())
    assert.same({-2, 0, 0, 2}, a:round():totable())
  end)

  it("round halves to the even neighbour (NumPy's rint, not Lua's or C's round)", function()
    local r = dl.array{0.5, 1.5, 2.5, -2.5, 3.5, -0.5}:round():totable()
    assert.same({0, 2, 2, -2, 4, 0}, r)
    assert.is_true(is_negative_zero(r[6]))  -- -0.5 rounds to -0.0, as in NumPy
  end)

  it("keep -0.0, inf and NaN", function()
    local inf = math.huge
    local c = dl.array{-0.5, -inf, 0 / 0}:ceil():totable()
    assert.is_true(is_negative_zero(c[1]))
    assert.equal(-inf, c[2])
    assert.is_true(is_nan(c[3]))
  end)

  it("keep the float dtype, and give integer arrays back unchanged in their dtype", function()
    assert.equal("float32", dl.array({1.5}, {dtype = "float32"}):floor().dtype)
    local i = dl.array({-3, 7}, {dtype = "int16"})
    assert.equal("int16", i:floor().dtype)     -- NumPy >= 2.1 (NumPy 1.24 gives float16)
    assert.same({-3, 7}, i:round():totable())
    assert.equal("bool", dl.array{true, false}:ceil().dtype)
  end)

  it("round complex numbers part by part; floor, ceil and trunc of complex raise DTYPE", function()
    local r = dl.array{{re = 2.5, im = -1.5}}:round()[1]
    assert.same({2, -2}, {r.re, r.im})
    local z = dl.array{{re = 1.5, im = 0}}
    expect_code("DTYPE", dl.floor, z)
    expect_code("DTYPE", dl.ceil, z)
    expect_code("DTYPE", z.trunc, z)
  end)
end)

describe("dl.abs and dl.sign", function()
  it("abs: magnitudes in the input's dtype; integers wrap as in NumPy", function()
    assert.same({3, 0, 2.5}, dl.array{-3, 0, 2.5}:abs():totable())
    local i8 = dl.array({-128, -5, 5}, {dtype = "int8"}):abs()
    assert.equal("int8", i8.dtype)
    assert.same({-128, 5, 5}, i8:totable())     -- -(-128) does not fit int8: it wraps
    assert.same({200}, dl.array({200}, {dtype = "uint8"}):abs():totable())
  end)

  it("abs of a complex array is a real array of the moduli", function()
    local z = dl.array({{re = 3, im = 4}, {re = 0, im = -2}}, {dtype = "complex64"})
    local r = z:abs()
    assert.equal("float32", r.dtype)
    assert.same({5, 2}, r:totable())
    assert.equal("float64", dl.array{{re = 3, im = 4}}:abs().dtype)
    assert.equal(1e300 * math.sqrt(2), dl.array{{re = 1e300, im = 1e300}}:abs()[1]) -- no overflow
  end)

  it("sign: -1, 0 or 1 in the input's dtype; NaN stays NaN", function()
    local s = dl.array{-2.5, NEGATIVE_ZERO, 0, 7, 0 / 0}:sign():totable()
    assert.same({-1, 0, 0, 1}, {s[1], s[2], s[3], s[4]})
    assert.is_false(is_negative_zero(s[2]))     -- sign(-0.0) is 0.0
    assert.is_true(is_nan(s[5]))
    local i = dl.array({-9, 0, 4}, {dtype = "int32"}):sign()
    assert.equal("int32", i.dtype)
    assert.same({-1, 0, 1}, i:totable())
    assert.same({0, 1}, dl.array({0, 200}, {dtype = "uint8"}):sign():totable())
  end)

  it("sign of a complex number is z / |z| (NumPy 2; NumPy 1.24 gives sign(z.real))", function()
    local z = dl.array{{re = 3, im = 4}, {re = 0, im = 0}, {re = -math.huge, im = 1}}
    local s = z:sign():totable()
    assert.same({{re = 0.6, im = 0.8}, {re = 0, im = 0}, {re = -1, im = 0}}, s)
  end)

  it("sign of a bool array raises DTYPE (as NumPy)", function()
    expect_code("DTYPE", dl.sign, dl.array{true, false})
  end)
end)

describe("dl.isnan, dl.isinf, dl.isfinite", function()
  it("give bool arrays", function()
    local a = dl.array{1, 0 / 0, math.huge, -math.huge}
    assert.same({false, true, false, false}, a:isnan():totable())
    assert.same({false, false, true, true}, a:isinf():totable())
    assert.same({true, false, false, false}, a:isfinite():totable())
    assert.equal("bool", a:isnan().dtype)
  end)

  it("look at both parts of a complex number", function()
    local z = dl.array{{re = 1, im = 0 / 0}, {re = math.huge, im = 0}, {re = 1, im = 2}}
    assert.same({true, false, false}, z:isnan():totable())
    assert.same({false, true, false}, z:isinf():totable())
    assert.same({false, false, true}, z:isfinite():totable())
  end)

  it("find integers and bools always finite", function()
    local i = dl.array({-5, 0, 5}, {dtype = "int64"})
    assert.same({false, false, false}, i:isnan():totable())
    assert.same({false, false, false}, i:isinf():totable())
    assert.same({true, true}, dl.array{true, false}:isfinite():totable())
  end)

  it("make masks for counting and selecting", function()
    local a = dl.array{1, 0 / 0, 3, 0 / 0}
    assert.equal(2, a:isnan():count_nonzero())
    assert.same({1, 0, 3, 0}, dl.where(a:isnan(), 0, a):totable())
  end)
end)

describe("misuse of the math functions", function()
  it("raises DELETED for a deleted array", function()
    local a = dl.array{1, 4}
    a:delete()
    expect_code("DELETED", dl.sqrt, a)
    expect_code("DELETED", dl.isnan, a)
  end)

  it("raises DTYPE for an out array that cannot take the result (same_kind)", function()
    local ints = dl.zeros({2}, {dtype = "int32"})
    local err = expect_code("DTYPE", dl.sqrt, dl.array{1, 4}, {out = ints})
    assert.matches("float64", err.message)
  end)

  it("raises SHAPE for an out array of another shape, READ_ONLY for a read-only one", function()
    expect_code("SHAPE", dl.exp, dl.array{1, 2}, {out = dl.zeros{3}})
    expect_code("READ_ONLY", dl.exp, dl.array{1, 2}, {out = dl.zeros{1}:expand{2}})
  end)

  it("raises ARGUMENT for unknown options, wrong operands and argument counts", function()
    expect_code("ARGUMENT", dl.sqrt, dl.array{1}, {outt = dl.zeros{1}})
    expect_code("ARGUMENT", dl.sqrt, "4")
    expect_code("ARGUMENT", dl.sqrt)
    expect_code("ARGUMENT", dl.atan2, dl.array{1})
  end)
end)
