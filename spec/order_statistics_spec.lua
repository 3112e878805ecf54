-- Order statistics: medians, quantiles and percentiles, NumPy 1.24's
-- np.median, np.quantile, np.percentile and their nan- forms.
--
-- This file documents:
--   dl.median(a, opts)             the middle value (the mean of the middle two)
--   dl.quantile(a, q, opts)        q in [0, 1]: a number or a list/array of them
--   dl.percentile(a, q, opts)      q in [0, 100]
--   dl.nanmedian, dl.nanquantile, dl.nanpercentile: the same, NaN left out
--
-- opts is a dim, or {dim = a dim or a list of dims (default: all),
-- keepdims = false, method = "linear"} (method: quantile and percentile
-- only; "linear", "lower", "higher", "nearest" or "midpoint"). A number q
-- gives the reduced shape; an array or list q puts its shape first. A
-- result with no dims is a Lua value. Robust statistics: unlike the mean,
-- one wild value does not move them.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

describe("dl.median", function()
  it("gives the middle of the frame times, whatever one slow frame does", function()
    local frame_ms = dl.array{16.6, 16.7, 16.5, 250.0, 16.8}
    assert.equal(16.7, dl.median(frame_ms))
    assert.is_true(dl.mean(frame_ms) > 60) -- the mean is dragged up
  end)

  it("takes the mean of the two middle values of an even count", function()
    assert.equal(2.5, dl.median{4, 1, 3, 2})
  end)

  it("works along a dim, like the reductions: 1-based, -1 the last, keepdims", function()
    local a = dl.array{{1, 9, 2}, {7, 3, 5}}
    assert.same({2, 5}, dl.median(a, 2):totable())
    assert.same({2, 5}, dl.median(a, {dim = -1}):totable())
    assert.same({4, 6, 3.5}, dl.median(a, {dim = 1}):totable())
    assert.same({{2}, {5}}, dl.median(a, {dim = 2, keepdims = true}):totable())
    assert.equal(4, dl.median(a, {dim = {1, 2}})) -- a list of dims: here all of them
  end)

  it("gives float64 for integers and keeps float32 (np.mean's rules)", function()
    assert.equal("float64", dl.median(dl.array({{1, 2}}, {dtype = "int32"}), 1).dtype)
    assert.equal("float32", dl.median(dl.array({{1, 2}}, {dtype = "float32"}), 1).dtype)
  end)

  it("is NaN where a slice holds a NaN, NaN for an empty slice", function()
    local nan = 0 / 0
    local m = dl.median(dl.array{{1, nan, 3}, {1, 2, 3}}, 2)
    local t = m:totable()
    assert.is_true(t[1] ~= t[1])
    assert.equal(2, t[2])
    local e = dl.median(dl.array{})
    assert.is_true(e ~= e)
  end)
end)

describe("dl.nanmedian", function()
  it("leaves NaN out: a dropped sample does not spoil the statistic", function()
    local nan = 0 / 0
    assert.equal(2, dl.nanmedian{1, nan, 3, 2})
    assert.same({2, 5}, dl.nanmedian(dl.array{{1, nan, 3}, {5, 5, nan}}, 2):totable())
  end)

  it("gives NaN for a slice of NaN only (NumPy also warns)", function()
    local nan = 0 / 0
    local r = dl.nanmedian{nan, nan}
    assert.is_true(r ~= r)
  end)
end)

describe("dl.percentile", function()
  it("gives the 95th percentile latency", function()
    local latency_ms = dl.arange(1, 101) -- 1, 2, ..., 100
    assert.equal(95.05, dl.percentile(latency_ms, 95))
  end)

  it("takes several percentiles at once: their shape comes first", function()
    local latency_ms = dl.arange(1, 101)
    local p = dl.percentile(latency_ms, {50, 90, 99})
    assert.same({3}, p.shape)
    local t = p:totable()
    assert.equal(50.5, t[1])
    assert.equal(90.10000000000001, t[2]) -- NumPy's value, bit for bit
    assert.equal(99.01, t[3])
  end)

  it("per service: one row each, the percentile along dim 2", function()
    local latency = dl.array{{10, 12, 11, 50}, {100, 90, 95, 400}}
    local p = dl.percentile(latency, {50, 100}, {dim = 2})
    assert.same({2, 2}, p.shape) -- (q, service)
    assert.same({{11.5, 97.5}, {50, 400}}, p:totable())
  end)

  it("refuses a percentile outside [0, 100]", function()
    expect_code("VALUE", dl.percentile, {1, 2, 3}, 101)
    expect_code("VALUE", dl.percentile, {1, 2, 3}, {50, -1})
  end)
end)

describe("dl.quantile", function()
  it("interpolates linearly between the two nearest ranks by default", function()
    -- rank (n - 1) * q = 3 * 0.5 = 1.5: halfway between 2 and 3
    assert.equal(2.5, dl.quantile({1, 2, 3, 4}, 0.5))
    assert.equal(1.75, dl.quantile({1, 2, 3, 4}, 0.25))
  end)

  it("takes NumPy's other methods", function()
    local a = {1, 2, 3, 4}
    assert.equal(2, dl.quantile(a, 0.5, {method = "lower"}))
    assert.equal(3, dl.quantile(a, 0.5, {method = "higher"}))
    assert.equal(2, dl.quantile(a, 0.4, {method = "nearest"})) -- rank 1.2 rounds to 1
    assert.equal(2.5, dl.quantile(a, 0.4, {method = "midpoint"}))
  end)

  it("keeps the dtype for lower, higher and nearest; linear gives float64", function()
    local a = dl.array({5, 1, 4}, {dtype = "int16"})
    assert.equal("int16", dl.quantile(a, {0.5}, {method = "lower"}).dtype)
    assert.equal("float64", dl.quantile(a, {0.5}).dtype)
    assert.equal("float64", dl.quantile(a:astype("float32"), {0.5}).dtype) -- as NumPy 1.24
  end)

  it("takes q as an array too, of any shape", function()
    local q = dl.array{{0, 1}, {0.5, 0.5}}
    assert.same({{1, 9}, {5, 5}}, dl.quantile(dl.arange(1, 10), q):totable())
  end)

  it("refuses q outside [0, 1], booleans with an interpolating method", function()
    expect_code("VALUE", dl.quantile, {1, 2}, 1.5)
    expect_code("VALUE", dl.quantile, {1, 2}, 0 / 0)
    expect_code("DTYPE", dl.quantile, dl.array{true, false}, 0.5)
    assert.equal(true, dl.quantile(dl.array{true, false, true}, 0.5, {method = "nearest"}))
  end)

  it("refuses NumPy's other methods and unknown options", function()
    expect_code("ARGUMENT", dl.quantile, {1, 2}, 0.5, {method = "weibull"})
    expect_code("ARGUMENT", dl.median, {1, 2}, {method = "lower"}) -- median has no method
    expect_code("INDEX", dl.median, {1, 2}, 2)                    -- a dim out of range
  end)

  it("raises INDEX for an empty slice, as NumPy 1.24's IndexError", function()
    expect_code("INDEX", dl.quantile, dl.array{}, 0.5)
  end)

  it("refuses complex arrays", function()
    expect_code("DTYPE", dl.median, dl.array{{re = 1, im = 2}})
  end)
end)

describe("dl.nanquantile and dl.nanpercentile", function()
  it("leave NaN out", function()
    local nan = 0 / 0
    assert.equal(2.5, dl.nanquantile({1, nan, 2, 3, 4}, 0.5))
    assert.equal(4, dl.nanpercentile({1, nan, 2, 3, 4}, 100))
  end)
end)
