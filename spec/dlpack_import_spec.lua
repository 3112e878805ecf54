-- dlpack_import_spec.lua -- importing DLPack data with dl.from_dlpack(x, opts).
--
-- dl.from_dlpack(x, opts) returns an array over the producer's memory:
--   x     a capsule (from a:to_dlpack or a C host), or any value with a
--         __dlpack method (see dlpack_protocol_spec.lua)
--   opts  {device = "cpu" | "cpu:0" | another backend, copy = nil | true | false};
--         other keys raise ARGUMENT, an unknown device raises UNKNOWN_DEVICE;
--         a device other than the tensor's means a copy there
--
-- Without opts.copy the import is ZERO COPY: the array and the producer share
-- elements, and writes through either side are seen by the other. The import
-- holds the memory on its own, so the source may be deleted first, and
-- deleting the import leaves the source alone. opts.copy = true gives the
-- array its own memory; opts.copy = false is always fine for host memory.
local dl = require "dlbridge"
local support = require "support"

local code_of = support.code_of

describe("dl.from_dlpack(capsule)", function()
  it("gives an array with the source's shape, dtype and values", function()
    local a = dl.arange(6, {dtype = "int32"}):view{2, 3}
    local b = dl.from_dlpack(a:to_dlpack())
    assert.is_true(dl.is_array(b))
    assert.same({2, 3}, b.shape)
    assert.equal("int32", b.dtype)
    assert.equal("cpu:0", b.device)
    assert.same({{0, 1, 2}, {3, 4, 5}}, b:totable())
  end)

  it("is zero copy: writes through either side are seen by the other", function()
    local a = dl.zeros{2, 3}
    local b = dl.from_dlpack(a:to_dlpack())
    b:set(1, 3, 7)      -- through the import ...
    assert.equal(7, a:get(1, 3))  -- ... seen in the source
    a:set(2, 1, 5)      -- through the source ...
    assert.equal(5, b:get(2, 1))  -- ... seen in the import
    a:fill(1)
    assert.same({{1, 1, 1}, {1, 1, 1}}, b:totable())
  end)

  it("is zero copy for legacy capsules too", function()
    local a = dl.zeros(4)
    local b = dl.from_dlpack(a:to_dlpack{max_version = {0, 8}})
    b[4] = 3
    assert.equal(3, a[4])
  end)
end)

describe("opts.copy", function()
  it("true gives the array its own memory", function()
    local a = dl.arange(4)
    local b = dl.from_dlpack(a:to_dlpack(), {copy = true})
    assert.same({0, 1, 2, 3}, b:totable())
    b[1] = 100
    assert.equal(0, a[1])
    a[2] = 200
    assert.equal(1, b[2])
  end)

  it("true gives a writable array even from a read-only source", function()
    local a = dl.array{1, 2}:view{1, 2}:expand{3, 2}
    local b = dl.from_dlpack(a:to_dlpack(), {copy = true})
    assert.is_false(b.readonly)
    b:set(1, 1, 9)
    assert.same({{9, 2}, {1, 2}, {1, 2}}, b:totable())
  end)

  it("true without opts.device copies on the tensor's own device", function()
    if not support.registered("engine_imp_exportable") then
      require("testbackend").register{name = "engine_imp_exportable", exportable = true}
    end
    local a = dl.arange(4, {device = "engine_imp_exportable"})
    local b = dl.from_dlpack(a:to_dlpack(), {copy = true})
    assert.equal("engine_imp_exportable:0", b.device)   -- not the cpu
    b[1] = 9
    assert.equal(0, a[1])
  end)

  it("false is fine for host memory (no copy needed): the import shares memory", function()
    local a = dl.zeros(3)
    local b = dl.from_dlpack(a:to_dlpack(), {copy = false})
    b[1] = 4
    assert.equal(4, a[1])
  end)

  it("nil is the default: zero copy", function()
    local a = dl.zeros(3)
    local b = dl.from_dlpack(a:to_dlpack(), {copy = nil})
    b[3] = 2
    assert.equal(2, a[3])
  end)

  it("raises ARGUMENT for anything but nil, true or false", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, a:to_dlpack(), {copy = "no"}))
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, a:to_dlpack(), {copy = 0}))
  end)
end)

describe("opts.device", function()
  it("accepts \"cpu\" and \"cpu:0\" for host memory", function()
    local a = dl.arange(3)
    local b = dl.from_dlpack(a:to_dlpack(), {device = "cpu"})
    assert.equal("cpu:0", b.device)
    local c = dl.from_dlpack(a:to_dlpack(), {device = "cpu:0"})
    c[1] = 10
    assert.equal(10, a[1])
    assert.equal(10, b[1])
  end)

  it("raises UNKNOWN_DEVICE for a device that does not exist", function()
    local a = dl.zeros(3)
    local ok, err = pcall(dl.from_dlpack, a:to_dlpack(), {device = "nosuch"})
    assert.is_false(ok)
    assert.equal("UNKNOWN_DEVICE", err.code)
    assert.equal("dl.from_dlpack", err.op)
    assert.equal("UNKNOWN_DEVICE", code_of(dl.from_dlpack, a:to_dlpack(), {device = "cpu:1"}))
  end)

  it("copies onto another device when opts.device names one", function()
    if not support.registered("engine_imp") then
      require("testbackend").register{name = "engine_imp"}
    end
    local a = dl.arange(4)
    local b = dl.from_dlpack(a:to_dlpack(), {device = "engine_imp"})
    assert.equal("engine_imp:0", b.device)
    assert.same({0, 1, 2, 3}, b:totable())
    b[1] = 9                       -- a copy: the source is unchanged
    assert.equal(0, a[1])
  end)

  it("raises COPY_REQUIRED for another device with copy = false", function()
    if not support.registered("engine_imp") then
      require("testbackend").register{name = "engine_imp"}
    end
    local a = dl.arange(4)
    assert.equal("COPY_REQUIRED",
                 code_of(dl.from_dlpack, a:to_dlpack(), {device = "engine_imp", copy = false}))
  end)

  it("checks the options before taking the capsule: a bad call leaves it usable", function()
    local a = dl.zeros(3)
    local capsule = a:to_dlpack()
    assert.equal("UNKNOWN_DEVICE", code_of(dl.from_dlpack, capsule, {device = "nosuch"}))
    assert.is_false(capsule.consumed)
    dl.from_dlpack(capsule, {device = "cpu"})[1] = 1
    assert.equal(1, a[1])
  end)
end)

describe("the options table", function()
  it("raises ARGUMENT for an unknown key", function()
    local a = dl.zeros(3)
    local ok, err = pcall(dl.from_dlpack, a:to_dlpack(), {dtype = "int32"})
    assert.is_false(ok)
    assert.equal("ARGUMENT", err.code)
    assert.truthy(err.message:find("dtype", 1, true))
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, a:to_dlpack(), {max_version = {1, 3}}))
  end)

  it("raises ARGUMENT when it is not a table", function()
    local a = dl.zeros(3)
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, a:to_dlpack(), "cpu"))
  end)
end)

describe("values that are neither capsules nor producers", function()
  it("raise ARGUMENT", function()
    for _, x in ipairs{42, "s", {}, true, print} do
      local ok, err = pcall(dl.from_dlpack, x)
      assert.is_false(ok)
      assert.equal("ARGUMENT", err.code, type(x))
      assert.equal("dl.from_dlpack", err.op)
    end
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, nil))
    assert.equal("ARGUMENT", code_of(dl.from_dlpack))
    assert.equal("ARGUMENT", code_of(dl.from_dlpack, io.stdout))
  end)
end)

describe("shapes and layouts", function()
  it("imports size-0 arrays", function()
    local b = dl.from_dlpack(dl.zeros{0, 3}:to_dlpack())
    assert.same({0, 3}, b.shape)
    assert.equal(0, b.size)
    assert.is_true(b:is_contiguous())
    assert.same({}, b:totable())
    local e = dl.from_dlpack(dl.array{}:to_dlpack())
    assert.same({0}, e.shape)
  end)

  it("imports 0-d arrays", function()
    local a = dl.full({}, 2.5)
    local b = dl.from_dlpack(a:to_dlpack())
    assert.equal(0, b.ndim)
    assert.same({}, b.shape)
    assert.equal(2.5, b:get())
    b:set(4.0)
    assert.equal(4.0, a:get())
  end)

  it("imports negative-step views, with their values and strides", function()
    local a = dl.arange(5)
    local r = a:slice(1, nil, nil, -1)
    local b = dl.from_dlpack(r:to_dlpack())
    assert.same({4, 3, 2, 1, 0}, b:totable())
    assert.same({-1}, b.strides)
    b[1] = 40     -- the last element of a
    assert.equal(40, a[5])
  end)

  it("imports transposed views, with their values and strides", function()
    local a = dl.arange(6):view{2, 3}
    local b = dl.from_dlpack(a:transpose():to_dlpack())
    assert.same({3, 2}, b.shape)
    assert.same({1, 3}, b.strides)
    assert.is_false(b:is_contiguous())
    assert.same({{0, 3}, {1, 4}, {2, 5}}, b:totable())
    b:set(3, 1, 20)
    assert.equal(20, a:get(1, 3))
  end)

  it("copies a non-contiguous source into a fresh layout with opts.copy = true", function()
    local a = dl.arange(6):view{2, 3}:transpose()
    local b = dl.from_dlpack(a:to_dlpack(), {copy = true})
    assert.same({{0, 3}, {1, 4}, {2, 5}}, b:totable())
    b:set(1, 1, 9)
    assert.equal(0, a:get(1, 1))
  end)
end)

describe("lifetimes", function()
  it("the import outlives the source being deleted", function()
    local a = dl.arange(4)
    local b = dl.from_dlpack(a:to_dlpack())
    a:delete()
    assert.same({0, 1, 2, 3}, b:totable())
    b[1] = 5
    assert.equal(5, b[1])
  end)

  it("the source outlives the import being deleted", function()
    local a = dl.arange(4)
    local b = dl.from_dlpack(a:to_dlpack())
    b:delete()
    assert.equal("DELETED", code_of(b.totable, b))
    assert.same({0, 1, 2, 3}, a:totable())
    a[4] = 30
    assert.equal(30, a[4])
  end)

  it("the import of a view outlives the view and its base", function()
    local base = dl.arange(6):view{2, 3}
    local view = base[2]
    local b = dl.from_dlpack(view:to_dlpack())
    view:delete()
    base:delete()
    collectgarbage("collect")
    assert.same({3, 4, 5}, b:totable())
  end)
end)
