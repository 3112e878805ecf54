-- Lua 5.3 and later: a producer's strides at the ends of int64.
--
-- A producer may send any stride on an extent-1 dim or a size-0 tensor,
-- math.maxinteger and math.mininteger included; dlbridge replaces them with
-- compact row-major ones. Lua 5.1, 5.2 and LuaJIT cannot write those
-- numbers: spec/dlpack_foreign_spec.lua sends 2^62 and -2^63.
local dl = require "dlbridge"
local P = require "dlpack_producer"

-- A producer's tensor: P.capsule with the values 1, 2, ..., n unless given.
local function foreign(spec)
  if not spec.values then
    local n = 1
    for _, e in ipairs(spec.shape) do n = n * e end
    spec.values = {}
    for k = 1, n do spec.values[k] = k end
  end
  spec.dtype = spec.dtype or "float64"
  return dl.from_dlpack(P.capsule(spec))
end

describe("strides that reach no element", function()
  it("of extent-1 dims become the compact row-major ones", function()
    local b = foreign{shape = {1, 3}, strides = {math.maxinteger // 2, 1}}
    assert.same({3, 1}, b.strides)
    b = foreign{shape = {3, 1}, strides = {1, math.mininteger}}
    assert.same({1, 1}, b.strides)
    b = foreign{shape = {2, 1, 2}, strides = {1, -(1 << 62), 2}}  -- column-major around it
    assert.same({1, 2, 2}, b.strides)
    assert.same({{{1, 2}}, {{3, 4}}}, b:totable())
  end)

  it("so that computing on such a tensor works", function()
    local b = foreign{shape = {1, 3}, strides = {math.maxinteger // 2, 1}, values = {1, 2, 3}}
    assert.equal(6, b:sum())
    assert.same({{14}}, b:matmul(b:T()):totable())
  end)

  it("of a size-0 tensor are all compact row-major", function()
    local b = foreign{shape = {0, 3}, strides = {math.maxinteger, math.mininteger}, values = {}}
    assert.same({3, 1}, b.strides)
    assert.equal(0, b:sum())
  end)
end)
