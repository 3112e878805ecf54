-- files_mapping_spec.lua -- how loads use the file: mapped, or read when the
-- host turns mapping off.
--
-- This file documents:
--   dl.load(path, opts), dl.load_safetensors(path, opts)   map the file
--   dlb_allow_mapping(L, 0)   (C, the host's switch; here through the test
--                             backend's tb.allow_mapping) makes them read it
--
-- By default a load maps the file read-only and its arrays are read-only
-- views of that one mapping: no copy, however large the file. The hazard of
-- any mapping: when another writer truncates the file in place while it is
-- mapped (another program, or a script through Lua's io library:
-- io.open(path, "w")), the next read of a page past the new end raises
-- SIGBUS and the process dies. dlbridge's own saves never do that (a new
-- file replaces the old one). So a host whose scripts also have the io
-- library turns mapping off; then every load from a path reads the file
-- into arrays of their own and maps nothing:
-- - a default load gives READ-ONLY arrays, as the views would be, so a
--   script behaves the same whichever the host chose;
-- - opts.copy = true gives writable arrays, as always;
-- - opts.copy = false raises COPY_REQUIRED (no view can be made);
-- - the string forms (dl.fromnpy, dl.fromsafetensors) always copy anyway.
-- Scripts cannot change the switch.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local expect_code = support.expect_code

local temp_path = support.temp_path
after_each(function()
  tb.allow_mapping(true) -- every spec file runs in the same state
  support.remove_temp_files()
end)

-- The lines of /proc/self/maps (Linux) that map path.
local function mappings_of(path)
  local n = 0
  for line in io.lines("/proc/self/maps") do
    if line:find(path, 1, true) then n = n + 1 end
  end
  return n
end

-- Truncates the file at path in place, as a script's io library can.
local function truncate(path)
  assert(io.open(path, "w")):close()
end

describe("loading with mapping on (the default)", function()
  it("maps the file once and views it", function()
    local npy, st = temp_path(), temp_path()
    dl.save(npy, dl.arange(1000))
    dl.save_safetensors(st, {a = dl.arange(10), b = dl.ones(3)})
    local a = dl.load(npy)
    local t = dl.load_safetensors(st)
    assert.equal(1, mappings_of(npy))
    assert.equal(1, mappings_of(st)) -- one mapping for every tensor
    assert.is_true(a.readonly and t.a.readonly and t.b.readonly)
  end)
end)

describe("loading with mapping off (dlb_allow_mapping(L, 0))", function()
  it("reads the file into read-only arrays of their own, mapping nothing", function()
    local npy, st = temp_path(), temp_path()
    dl.save(npy, dl.arange(2 ^ 20, {dtype = "int32"}))
    dl.save_safetensors(st, {w = dl.arange(2 ^ 20, {dtype = "int32"}), m = dl.array{true}})
    tb.allow_mapping(false)
    local a = dl.load(npy)
    local t = dl.load_safetensors(st)
    assert.equal(0, mappings_of(npy))
    assert.equal(0, mappings_of(st))
    assert.is_true(a.readonly and t.w.readonly and t.m.readonly)
    expect_code("READ_ONLY", a.fill, a, 0)
    -- the files truncated under the arrays: nothing of them is mapped
    truncate(npy)
    truncate(st)
    local n = 2 ^ 20 * (2 ^ 20 - 1) / 2 -- 0 + 1 + ... + (2^20 - 1)
    assert.equal(n, a:sum()) -- with a mapping: SIGBUS, the end of the process
    assert.equal(n, t.w:sum())
    assert.is_true(t.m:get(1))
  end)

  it("gives writable arrays with copy = true, COPY_REQUIRED with copy = false", function()
    local npy, st = temp_path(), temp_path()
    dl.save(npy, dl.arange(3))
    dl.save_safetensors(st, {a = dl.arange(3)})
    tb.allow_mapping(false)
    assert.is_false(dl.load(npy, {copy = true}).readonly)
    assert.is_false(dl.load_safetensors(st, {copy = true}).a.readonly)
    local err = expect_code("COPY_REQUIRED", dl.load, npy, {copy = false})
    assert.truthy(err.message:find("dlb_allow_mapping", 1, true))
    expect_code("COPY_REQUIRED", dl.load_safetensors, st, {copy = false})
  end)

  it("leaves the string forms as they are: copies", function()
    tb.allow_mapping(false)
    assert.same({0, 1, 2}, dl.fromnpy(dl.tonpy(dl.arange(3))):totable())
    assert.same({0, 1}, dl.fromsafetensors(dl.tosafetensors{a = dl.arange(2)}).a:totable())
  end)

  it("maps again once the host turns it back on", function()
    local npy = temp_path()
    dl.save(npy, dl.arange(3))
    tb.allow_mapping(false)
    local copied = dl.load(npy)
    tb.allow_mapping(true)
    local viewed = dl.load(npy)
    assert.equal(1, mappings_of(npy))
    assert.same(copied:totable(), viewed:totable())
  end)
end)
