-- The image example: preparing a camera frame for a model, end to end.
--
-- A frame arrives as RGBA8 bytes, row-major, H x W x 4. A model wants float32
-- in [0, 1], channels first (3 x H x W), contiguous. Four one-liners:
--
--   local img  = dl.frombytes(bytes, "uint8", {H, W, 4})
--   local chw  = img:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32") / 255
--   local mean, max = chw:mean{dim = {2, 3}}, chw:max{dim = {2, 3}}
--   local mask = chw:select(1, 1):gt(0.5)     -- red above one half
--   local n    = mask:count_nonzero()
--
-- This file documents that example and what it relies on:
--   dl.frombytes(s, dtype, shape)      the frame's bytes as an array
--   a:narrow / a:permute / a:select    views: drop alpha, channels first, one channel
--   a:astype("float32") / 255          a uint8 / 255 alone is float64 (NEP 50)
--   a:mean{dim = {2, 3}, keepdims =}   per-channel mean (float32 for float32)
--   a:max{dim = {2, 3}}                per-channel max
--   a:gt(x)                            element-wise comparison -> bool array
--   a:count_nonzero()                  a Lua integer
-- The same four tasks are timed against NumPy in bench/image.lua.
--
-- Expected values are computed here independently, with plain Lua loops over
-- the same bytes (float32 rounding done with string.pack("f"), support.string_pack on Lua 5.1).
local dl = require "dlbridge"
local support = require "support"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local string_unpack = support.string_unpack -- string.unpack likewise

local H, W = 4, 6

-- Pixel (h, w) of the test frame: red rises 0, 11, ..., 253 in row-major order,
-- green falls, blue is scattered, alpha is opaque.
local function pixel(h, w)
  local k = (h - 1) * W + (w - 1)
  return k * 11, 255 - k * 11, (h * w * 29) % 256, 255
end

-- The frame as a camera or an image decoder hands it over: a byte string.
local function frame_bytes()
  local parts = {}
  for h = 1, H do
    for w = 1, W do parts[#parts + 1] = string.char(pixel(h, w)) end
  end
  return table.concat(parts)
end

-- x rounded to the nearest float32.
local function f32(x) return (string_unpack("f", string_pack("f", x))) end

-- Channel c (1 = red) of pixel (h, w) normalised as float32 does it: byte / 255
-- rounded once (a float32 quotient computed in double and rounded is exact).
local function expected_value(c, h, w)
  return f32(select(c, pixel(h, w)) / 255)
end

local function prepare()
  local img = dl.frombytes(frame_bytes(), "uint8", {H, W, 4})
  return img, img:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32") / 255
end

describe("preparing an RGBA8 frame for a model", function()
  it("1. RGBA8 H x W x 4 -> float32 3 x H x W in [0, 1]: drop alpha, / 255, channels first",
     function()
    local img, chw = prepare()
    assert.same({H, W, 4}, img.shape)
    assert.equal("float32", chw.dtype)
    assert.same({3, H, W}, chw.shape)
    assert.is_true(chw:is_contiguous())
    for c = 1, 3 do
      for h = 1, H do
        for w = 1, W do assert.equal(expected_value(c, h, w), chw:get(c, h, w)) end
      end
    end
  end)

  it("2. per-channel mean and max", function()
    local _, chw = prepare()
    local mean, max = chw:mean{dim = {2, 3}}, chw:max{dim = {2, 3}}
    assert.same({3}, mean.shape)
    assert.same({3}, max.shape)
    assert.equal("float32", mean.dtype)
    for c = 1, 3 do
      local sum, peak = 0, -math.huge
      for h = 1, H do
        for w = 1, W do
          local v = expected_value(c, h, w)
          sum, peak = sum + v, math.max(peak, v)
        end
      end
      assert.near(sum / (H * W), mean[c], 1e-6)
      assert.equal(peak, max[c])
    end
    -- red runs 0 .. 253, so its max is 253 / 255 (in float32)
    assert.equal(f32(253 / 255), max[1])
  end)

  it("3. threshold -> mask: a bool array, true where red > 0.5", function()
    local _, chw = prepare()
    local mask = chw:select(1, 1):gt(0.5)
    assert.equal("bool", mask.dtype)
    assert.same({H, W}, mask.shape)
    for h = 1, H do
      for w = 1, W do
        assert.equal(expected_value(1, h, w) > 0.5, mask:get(h, w))
      end
    end
  end)

  it("4. count the mask: a whole number (a Lua integer on Lua 5.3 and later)", function()
    local _, chw = prepare()
    local n = chw:select(1, 1):gt(0.5):count_nonzero()
    local expected = 0
    for h = 1, H do
      for w = 1, W do
        if expected_value(1, h, w) > 0.5 then expected = expected + 1 end
      end
    end
    assert.equal(expected, n)
    assert.equal(12, n) -- red is 11 k for k = 0 .. 23; above 127.5 from k = 12
    assert.equal("12", tostring(n)) -- not "12.0": an integer where Lua has them
  end)
end)

describe("going further with the frame", function()
  it("keepdims = true keeps the reduced dims, so each channel centres by broadcasting",
     function()
    local _, chw = prepare()
    local mean = chw:mean{dim = {2, 3}, keepdims = true}
    assert.same({3, 1, 1}, mean.shape)
    local centred = chw - mean
    assert.same({3, H, W}, centred.shape)
    local check = centred:mean{dim = {2, 3}}
    for c = 1, 3 do assert.near(0, check[c], 1e-6) end
  end)

  it("dividing the uint8 frame itself gives float64: astype first to get float32", function()
    local img = prepare()
    assert.equal("float64", (img / 255).dtype)
    assert.equal("float32", (img:astype("float32") / 255).dtype)
  end)
end)

describe("mistakes with the frame", function()
  it("a per-channel {3} array against {3, H, W} raises SHAPE: view it as {3, 1, 1}",
     function()
    local _, chw = prepare()
    local mean = chw:mean{dim = {2, 3}}
    support.expect_code("SHAPE", function() return chw - mean end)
    assert.same({3, H, W}, (chw - mean:view{3, 1, 1}).shape)
  end)

  it("reducing over a dim the array lacks raises INDEX", function()
    local _, chw = prepare()
    support.expect_code("INDEX", function() return chw:mean{dim = {2, 4}} end)
    support.expect_code("INDEX", function() return chw:max{dim = 0} end)
  end)

  it("a byte string of the wrong length raises SHAPE", function()
    support.expect_code("SHAPE", function()
      return dl.frombytes(frame_bytes():sub(2), "uint8", {H, W, 4})
    end)
  end)
end)
