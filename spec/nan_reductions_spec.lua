-- Reductions that leave NaNs out: NumPy's nan-functions.
--
-- This file documents, each as a method and as a module function:
--   a:nansum(opts)    dl.nansum(a, opts)     the sum, NaNs counted as 0
--   a:nanprod(opts)   dl.nanprod(a, opts)    the product, NaNs counted as 1
--   a:nanmean(opts)   dl.nanmean(a, opts)    the mean of the elements that are not NaN
--   a:nanstd(opts)    dl.nanstd(a, opts)     their standard deviation
--   a:nanvar(opts)    dl.nanvar(a, opts)     their variance
--   a:nanmin(opts)    dl.nanmin(a, opts)     the smallest element that is not NaN
--   a:nanmax(opts)    dl.nanmax(a, opts)     the largest element that is not NaN
--   a:nanargmin(opts) dl.nanargmin(a, opts)  the 1-based index of that smallest
--   a:nanargmax(opts) dl.nanargmax(a, opts)  the 1-based index of that largest
-- The options, result dtypes and errors are those of the reduction without
-- "nan" (spec/reductions_spec.lua): dim, keepdims, out; dtype for nansum,
-- nanprod, nanmean, nanstd and nanvar; ddof for nanstd and nanvar.
--
-- A slice of NaNs only gives: nansum 0, nanprod 1; nanmean, nanstd,
-- nanvar, nanmin and nanmax NaN (NumPy also warns; dlbridge does not);
-- nanargmin and nanargmax raise VALUE (NumPy's ValueError "All-NaN slice
-- encountered"). Bool and integer arrays hold no NaN: there each gives what
-- the reduction without "nan" gives.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

local nan = 0 / 0
local inf = math.huge

local function is_nan(x) return x ~= x end

-- Three sensors (rows), four readings each; NaN where a reading was lost.
local function readings(dtype)
  return dl.array({{20.0, nan, 22.0, 21.0},
                   {nan, nan, nan, nan},
                   {19.0, 19.5, nan, 20.5}}, {dtype = dtype or "float64"})
end

describe("readings with missing values", function()
  it("sum and average the readings that are there", function()
    local r = readings()
    assert.equal(122.0, r:nansum())
    assert.equal(122.0 / 6, r:nanmean())
    local per_sensor = r:nanmean(2)
    assert.equal(21.0, per_sensor[1])
    assert.is_true(is_nan(per_sensor[2])) -- sensor 2 read nothing
    assert.equal(59.0 / 3, per_sensor[3])
  end)

  it("find the extremes and where they are", function()
    local r = readings()
    assert.equal(22.0, r:nanmax())
    assert.equal(19.0, r:nanmin())
    assert.equal(3, r:nanargmax()) -- the flat row-major index, 1-based
    assert.equal(9, r:nanargmin())
    assert.same({22.0, 20.5}, dl.nanmax(r:slice(1, 1, 3, 2), 2):totable())
    assert.same({3, 4}, r:slice(1, 1, 3, 2):nanargmax(2):totable())
  end)

  it("give the spread of each sensor's readings", function()
    local r = readings()
    local var = r:nanvar(2)
    assert.equal(2.0 / 3, var[1])
    assert.is_true(is_nan(var[2]))
    assert.equal(math.sqrt(2.0 / 3), r:nanstd(2)[1])
    assert.equal(1.0, r:nanvar{dim = 2, ddof = 1}[1])
  end)

  it("take the same options as the reductions without nan", function()
    local r = readings()
    local kept = r:nanmean{dim = 2, keepdims = true}
    assert.same({3, 1}, kept.shape)
    assert.equal(20.0 - 21.0, (r - kept):get(1, 1))
    assert.same({39.0, 19.5, 22.0, 41.5}, r:nansum{dim = 1}:totable())
    assert.equal(122.0, r:nansum{dim = {1, -1}})
    assert.equal("float32", r:nanmean{dtype = "float32", dim = 1}.dtype)
    local out = dl.zeros({3}, {dtype = "float32"})
    assert.equal(out, dl.nanmax(r, {dim = 2, out = out}))
    assert.same({22.0, 20.5}, {out[1], out[3]})
    assert.is_true(is_nan(out[2]))
  end)
end)

describe("a slice of NaNs only", function()
  local all_nan = dl.array({nan, nan, nan}, {dtype = "float32"})

  it("sums to 0 and multiplies to 1", function()
    assert.equal(0.0, all_nan:nansum())
    assert.equal(1.0, all_nan:nanprod())
  end)

  it("has a NaN mean, spread, minimum and maximum (no warning)", function()
    for _, name in ipairs{"nanmean", "nanstd", "nanvar", "nanmin", "nanmax"} do
      assert.is_true(is_nan(dl[name](all_nan)), name)
    end
  end)

  it("has no index: nanargmin and nanargmax raise VALUE", function()
    local err = expect_code("VALUE", function() return all_nan:nanargmax() end)
    assert.matches("All%-NaN slice encountered", err.message)
    expect_code("VALUE", function() return dl.nanargmin(all_nan) end)
    -- one such slice among others is enough, as in NumPy
    expect_code("VALUE", function() return readings():nanargmin(2) end)
    assert.same({1, 3, 1, 1}, readings():nanargmax(1):totable())
  end)
end)

describe("the NaN rules in detail", function()
  it("pass over NaNs but not over infinities", function()
    local a = dl.array{1, nan, inf, 2}
    assert.equal(inf, a:nansum())
    assert.equal(inf, a:nanmax())
    assert.equal(3, a:nanargmax())
    assert.is_true(is_nan(dl.array{inf, -inf, nan}:nansum()))
    assert.is_true(is_nan(dl.array{inf, 1, nan}:nanvar())) -- inf - inf, as in NumPy
  end)

  it("read NaN as -inf for nanargmax and +inf for nanargmin, as NumPy does", function()
    assert.equal(1, dl.array{nan, -inf}:nanargmax()) -- the NaN comes first
    assert.equal(2, dl.array{nan, -inf, 1}:nanargmin())
    assert.equal(1, dl.array{nan, inf}:nanargmin())
  end)

  it("divide the variance by count - ddof, and give NaN where that is not positive", function()
    local a = dl.array{1.0, nan, 3.0}
    assert.equal(2.0, a:nanvar{ddof = 1})
    assert.is_true(is_nan(a:nanvar{ddof = 2}))
    assert.is_true(is_nan(a:nanstd{ddof = 3}))
    -- var (no NaN left out) gives inf there, as NumPy's var
    assert.equal(inf, dl.array{1.0, 3.0}:var{ddof = 2})
  end)

  it("leave out a complex number with a NaN in either part", function()
    local z = dl.array({{re = 1, im = 2}, {re = nan, im = 1}, {re = 3, im = nan}, {re = 3, im = -2}},
                       {dtype = "complex128"})
    local s = z:nansum()
    assert.same({4.0, 0.0}, {s.re, s.im})
    local m = z:nanmean()
    assert.same({2.0, 0.0}, {m.re, m.im})
    assert.equal(5.0, z:nanvar()) -- |1+2i - 2|^2 = |3-2i - 2|^2 = 5
    -- into a real dtype: the NaN numbers go first, then the imaginary parts
    assert.equal(4.0, z:nansum{dtype = "float64"})
    assert.equal(2.0, z:nanmean{dtype = "float64"})
  end)

  it("refuse to order complex numbers, as min and max do", function()
    local z = dl.array({{re = 1, im = 0}}, {dtype = "complex64"})
    expect_code("DTYPE", function() return z:nanmax() end)
    expect_code("DTYPE", function() return z:nanargmin() end)
  end)

  it("raise VALUE for an empty reduction without an identity", function()
    local e = dl.zeros({0}, {dtype = "float32"})
    expect_code("VALUE", function() return e:nanmax() end)
    expect_code("VALUE", function() return e:nanargmax() end)
    assert.equal(0.0, e:nansum())
    assert.is_true(is_nan(e:nanmean()))
  end)

  it("reduce a 0-d array to its element", function()
    local x = dl.array(2.5)
    assert.equal(2.5, x:nanmax())
    assert.equal(1, x:nanargmin())
    assert.equal(2.5, x:nanmean())
    assert.is_true(is_nan(dl.array(nan):nanmean()))
  end)

  it("keep float16 results in float16, computing in float32", function()
    local h = readings("float16")
    assert.equal("float16", h:nanmean(2).dtype)
    assert.equal(21.0, h:nanmean(2)[1])
    assert.equal(122.0, h:nansum())
  end)
end)

describe("bool and integer arrays", function()
  local i = dl.array({{3, 1}, {2, 5}}, {dtype = "int32"})

  it("give what the reduction without nan gives, dtypes included", function()
    assert.equal("int64", i:nansum(1).dtype)
    assert.equal("float64", i:nanmean(1).dtype)
    assert.equal("int32", i:nanmax(1).dtype)
    assert.equal("int64", i:nanargmax(1).dtype)
    assert.equal(i:sum(), i:nansum())
    assert.equal(i:prod(), i:nanprod())
    assert.equal(i:mean(), i:nanmean())
    assert.equal(i:var(), i:nanvar())
    assert.equal(4, i:nanargmax())
    assert.is_true(dl.array{true, false}:nanmax())
  end)

  it("give var's inf, not NaN, where count - ddof is not positive", function()
    assert.equal(inf, dl.array({1, 3}, {dtype = "int32"}):nanvar{ddof = 2})
  end)

  it("refuse an integer dtype for the mean", function()
    expect_code("DTYPE", function() return i:nanmean{dtype = "int32"} end)
  end)
end)
