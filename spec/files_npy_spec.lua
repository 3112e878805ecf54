-- files_npy_spec.lua -- NumPy .npy files: saving and loading arrays.
--
-- This file documents:
--   dl.save(path, a)       writes a as a .npy file (what np.save writes); returns nothing
--   dl.load(path, opts)    the array of a .npy file: a read-only view of the
--                          file's memory mapping where possible
--   dl.tonpy(a)            the bytes dl.save would write, as a string
--   dl.fromnpy(s, opts)    the array of a .npy file held in a string (a copy)
--   opts = {copy = true | false, device = "cpu"}
--
-- Loading reads NumPy's format versions 1.0, 2.0 and 3.0, every dtype NumPy
-- stores that dlbridge has (bool, int8..int64, uint8..uint64, float16,
-- float32, float64, complex64, complex128), C and Fortran order, either byte
-- order, 0-d and size-0 arrays. Saving writes version 1.0 in C order and
-- this machine's byte order, byte for byte as NumPy 1.24's np.save.
--
-- dl.load maps the file and returns a READ-ONLY view of the mapping: no
-- copy, however large the file; the mapping stays while any array, view or
-- DLPack export of it lives, and is unmapped once. Files whose data cannot
-- be viewed as it is -- the other byte order, misaligned data, or bool
-- bytes other than 0 and 1 -- are loaded as a converted copy, read-only
-- like every array of a default load (as dl.load_safetensors does).
-- opts.copy = true always gives a writable copy; opts.copy = false raises
-- COPY_REQUIRED where only a copy would do. dl.fromnpy always copies.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local string_unpack = support.string_unpack -- string.unpack likewise

local expect_code = support.expect_code

local ENGINE = "engine_npy" -- a backend whose memory the host cannot address
if not support.registered(ENGINE) then tb.register{name = ENGINE} end

-- A fresh temporary path, removed when the test ends.
local temp_path = support.temp_path
after_each(support.remove_temp_files)

local file_bytes = support.file_bytes
local write_file = support.write_file

-- A .npy file built by hand, as the format says: the magic "\x93NUMPY", the
-- version, the header's length (2 bytes little-endian in 1.0, 4 in 2.0 and
-- 3.0), the header dict padded with spaces and a newline so that the data
-- starts at a multiple of 64, then the data.
local function npy_bytes(dict, data, major)
  major = major or 1
  local pre = major == 1 and 10 or 12
  local header = dict .. (" "):rep((64 - (pre + #dict + 1) % 64) % 64) .. "\n"
  local length = major == 1 and string_pack("<I2", #header) or string_pack("<I4", #header)
  return "\147NUMPY" .. string.char(major, 0) .. length .. header .. (data or "")
end

local DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
  "float16", "float32", "float64", "complex64", "complex128"}

describe("dl.save(path, a) and dl.load(path)", function()
  it("round-trip every dtype .npy has: same dtype, shape and values", function()
    local path = temp_path()
    for _, dtype in ipairs(DTYPES) do
      local a = dl.arange(6):astype(dtype):view{2, 3}
      dl.save(path, a)
      local b = dl.load(path)
      assert.equal(dtype, b.dtype)
      assert.same({2, 3}, b.shape)
      assert.same(a:totable(), b:totable())
    end
  end)

  it("writes what np.save writes: magic, a padded header dict, the raw elements", function()
    local path = temp_path()
    local a = dl.array({{1, 2, 3}, {4, 5, 6}}, {dtype = "int32"})
    assert.is_nil(dl.save(path, a)) -- returns nothing
    local s = file_bytes(path)
    assert.equal("\147NUMPY\1\0", s:sub(1, 8)) -- \147 is 0x93 (Lua 5.1 has no \x escapes)
    assert.equal(118, string_unpack("<I2", s, 9)) -- the header's length: data at byte 128
    local dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
    assert.equal(dict, s:sub(11, 10 + #dict))
    assert.equal("\n", s:sub(128, 128))
    assert.equal(a:tobytes(), s:sub(129))
  end)

  it("gives a read-only array over the file's memory: no copy", function()
    local path = temp_path()
    dl.save(path, dl.arange(10))
    local a = dl.load(path)
    assert.is_true(a.readonly)
    expect_code("READ_ONLY", function() a[1] = 5 end)
    expect_code("READ_ONLY", a.fill, a, 0)
    local c = a:copy() -- an ordinary writable array
    c[1] = 5
    assert.equal(5, c[1])
    assert.equal(0, a[1])
  end)

  it("keeps the mapping while a view of it lives, even after the file is removed", function()
    local path = temp_path()
    dl.save(path, dl.arange(100))
    local a = dl.load(path)
    local tail = a:slice(1, 91, 100)
    a:delete()
    os.remove(path) -- a mapping outlives its file's name
    assert.same({90, 91, 92, 93, 94, 95, 96, 97, 98, 99}, tail:totable())
  end)

  it("replaces a file as a whole: arrays loaded from the old file keep its values", function()
    local path = temp_path()
    dl.save(path, dl.arange(5))
    local old = dl.load(path)
    dl.save(path, old * 10) -- a new file is written beside it, then renamed over it
    dl.save(path, dl.load(path) + 1) -- saving over the very file a view maps is fine too
    assert.same({0, 1, 2, 3, 4}, old:totable())
    assert.same({1, 11, 21, 31, 41}, dl.load(path):totable())
  end)

  it("counts the mapping as dlbridge memory until the last view goes", function()
    local path = temp_path()
    dl.save(path, dl.zeros(1000))
    local size = #file_bytes(path)
    collectgarbage()
    local before = dl.memory().in_use
    local a = dl.load(path)
    assert.equal(before + size, dl.memory().in_use)
    a:delete()
    assert.equal(before, dl.memory().in_use)
  end)

  it("exports through DLPack as read-only", function()
    local path = temp_path()
    dl.save(path, dl.arange(4))
    local a = dl.load(path)
    local b = dl.from_dlpack(a:to_dlpack())
    assert.is_true(b.readonly)
    -- a legacy capsule has no read-only flag: only a copy goes out that way
    expect_code("COPY_REQUIRED", a.to_dlpack, a, {max_version = {0, 0}, copy = false})
    assert.is_false(dl.from_dlpack(a:to_dlpack{max_version = {0, 0}}).readonly)
  end)

  it("saves 0-d and size-0 arrays", function()
    local path = temp_path()
    dl.save(path, dl.array(2.5))
    local s = dl.load(path)
    assert.equal(0, s.ndim)
    assert.equal(2.5, s:get())
    dl.save(path, dl.zeros({3, 0}, {dtype = "uint16"}))
    local e = dl.load(path)
    assert.same({3, 0}, e.shape)
    assert.equal("uint16", e.dtype)
    assert.equal(0, e.size)
  end)

  it("saves a view in its logical (row-major) order, whatever its strides", function()
    local path = temp_path()
    local m = dl.arange(24):view{2, 3, 4}
    for _, v in ipairs{m:permute{2, 1, 3}, m:slice(2, 1, 3, 2), m:slice(1, 2, 1, -1),
                       dl.array{1, 2, 3}:expand{2, 3}} do
      dl.save(path, v)
      local back = dl.load(path)
      assert.same(v.shape, back.shape)
      assert.same(v:totable(), back:totable())
      assert.is_true(back:is_contiguous())
    end
  end)

  it("saves a transposed matrix as np.save does: its bytes as they lie, in Fortran order",
     function()
    local path = temp_path()
    local m = dl.arange(12, {dtype = "int32"}):view{3, 4}
    local t = m:transpose() -- column-major over m's memory
    dl.save(path, t)
    local s = dl.tonpy(t)
    assert.matches("'fortran_order': True, 'shape': %(4, 3%)", s)
    assert.equal(m:tobytes(), s:sub(-48)) -- m's 12 elements, unmoved
    local back = dl.load(path)
    assert.same({4, 3}, back.shape)
    assert.same(t:totable(), back:totable())
    assert.same(t:totable(), dl.fromnpy(s):totable())
    -- a C-contiguous array, every 1-D one among them, stays in C order
    assert.matches("'fortran_order': False", dl.tonpy(m))
    assert.matches("'fortran_order': False", dl.tonpy(m:transpose():transpose()))
    assert.matches("'fortran_order': False", dl.tonpy(dl.arange(4):view{4, 1}:transpose()))
  end)

  it("saves arrays of any backend (read through the backend, as a:tobytes())", function()
    local path = temp_path()
    local a = dl.arange(6, {device = ENGINE}):view{2, 3}
    dl.save(path, a:transpose())
    assert.same({{0, 3}, {1, 4}, {2, 5}}, dl.load(path):totable())
  end)

  it("raises DTYPE for bfloat16, which .npy has no type for (convert first)", function()
    local path = temp_path()
    local a = dl.ones(3, {dtype = "bfloat16"})
    local err = expect_code("DTYPE", dl.save, path, a)
    assert.matches('astype%("float32"%)', err.hint)
    dl.save(path, a:astype("float32"))
    assert.same({1, 1, 1}, dl.load(path):totable())
  end)

  it("raises IO when the system refuses, with errno in err.status", function()
    local err = expect_code("IO", dl.load, "/no/such/dir/data.npy")
    assert.equal(2, err.status) -- ENOENT
    assert.matches("data.npy", err.message)
    expect_code("IO", dl.save, "/no/such/dir/data.npy", dl.zeros(2))
  end)

  it("raises IO for a directory (no regular file), ARGUMENT for a bad path", function()
    assert.equal(21, expect_code("IO", dl.load, "/tmp").status) -- EISDIR
    expect_code("ARGUMENT", dl.load, 42)
    expect_code("ARGUMENT", dl.save, {}, dl.zeros(2))
    expect_code("ARGUMENT", dl.save, "x\0y.npy", dl.zeros(2))
    expect_code("ARGUMENT", dl.save, temp_path(), {1, 2})
    local a = dl.zeros(2)
    a:delete()
    expect_code("DELETED", dl.save, temp_path(), a)
  end)
end)

describe("dl.load(path, opts)", function()
  it("copy = true gives a writable copy", function()
    local path = temp_path()
    dl.save(path, dl.arange(5))
    local a = dl.load(path, {copy = true})
    assert.is_false(a.readonly)
    a[1] = 42
    assert.same({42, 1, 2, 3, 4}, a:totable())
    assert.same({0, 1, 2, 3, 4}, dl.load(path):totable()) -- the file is untouched
  end)

  it("copy = false is the default view, and refuses a file that needs converting", function()
    local path = temp_path()
    dl.save(path, dl.arange(3))
    assert.is_true(dl.load(path, {copy = false}).readonly)
    write_file(path, npy_bytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                               string_pack(">i4>i4", 1, -2)))
    local err = expect_code("COPY_REQUIRED", dl.load, path, {copy = false})
    assert.matches("byte order", err.message)
  end)

  it("byte-swaps a file in the other byte order into a copy (read-only unless copy = true)", function()
    local path = temp_path()
    write_file(path, npy_bytes("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }",
                               string_pack(">d>d>d", 1.5, -2, 1e300)))
    local a = dl.load(path)
    assert.same({1.5, -2, 1e300}, a:totable())
    assert.is_true(a.readonly)
    assert.is_false(dl.load(path, {copy = true}).readonly)
  end)

  it("gives a Fortran-order file Fortran strides (still a view)", function()
    local path = temp_path()
    -- the 2x3 matrix {{1, 2, 3}, {4, 5, 6}} stored column by column
    write_file(path, npy_bytes("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
                               string_pack("<i2i2i2i2i2i2", 1, 4, 2, 5, 3, 6)))
    local a = dl.load(path)
    assert.same({{1, 2, 3}, {4, 5, 6}}, a:totable())
    assert.same({1, 2}, a.strides)
    assert.is_true(a.readonly)
    assert.same({1, 2}, dl.load(path, {copy = true}).strides)
  end)

  it("reads versions 2.0 and 3.0, and either quote style", function()
    local path = temp_path()
    for major = 1, 3 do
      write_file(path, npy_bytes('{"descr": "<u2", "fortran_order": False, "shape": (2,)}',
                                 string_pack("<I2<I2", 7, 65535), major))
      assert.same({7, 65535}, dl.load(path):totable())
    end
  end)

  it("refuses a header longer than 64 KiB (NumPy refuses over 10000 bytes) with FORMAT", function()
    -- A file (a script) decides the header's length: such a header is never read.
    local s = "\147NUMPY\2\0" .. string_pack("<I4", 70000) .. string.rep(" ", 70000)
    local err = expect_code("FORMAT", dl.fromnpy, s)
    assert.matches("70000 bytes", err.message, 1, true)
  end)

  it("stores bool bytes other than 0 and 1 as true, in a copy", function()
    local path = temp_path()
    write_file(path, npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                               "\0\2\1"))
    local a = dl.load(path)
    assert.same({false, true, true}, a:totable())
    assert.is_true(a.readonly) -- a read-only copy: a view would expose a byte that is no bool
    assert.equal("\0\1\1", a:tobytes())
    expect_code("COPY_REQUIRED", dl.load, path, {copy = false})
  end)

  it("device = a backend's device copies the data there", function()
    local path = temp_path()
    dl.save(path, dl.arange(4))
    local a = dl.load(path, {device = ENGINE})
    assert.equal(ENGINE .. ":0", a.device)
    assert.same({0, 1, 2, 3}, a:totable())
    expect_code("COPY_REQUIRED", dl.load, path, {device = ENGINE, copy = false})
    assert.equal("cpu:0", dl.load(path, {device = "cpu"}).device)
  end)

  it("raises ARGUMENT for an unknown option or a copy that is no boolean", function()
    local path = temp_path()
    dl.save(path, dl.arange(2))
    expect_code("ARGUMENT", dl.load, path, {cpoy = true})
    expect_code("ARGUMENT", dl.load, path, {copy = 1})
    expect_code("ARGUMENT", dl.load, path, "copy")
    expect_code("UNKNOWN_DEVICE", dl.load, path, {device = "gpu"})
  end)
end)

describe("dl.tonpy(a) and dl.fromnpy(s)", function()
  it("hold the bytes of a .npy file in a string (for engines with their own files)", function()
    local path = temp_path()
    local a = dl.linspace(0, 1, 5, {dtype = "float32"})
    dl.save(path, a)
    local s = dl.tonpy(a)
    assert.equal(file_bytes(path), s)
    local b = dl.fromnpy(s)
    assert.same(a:totable(), b:totable())
    assert.is_false(b.readonly) -- always a copy
  end)

  it("read what dl.load reads", function()
    local s = npy_bytes("{'descr': '>c8', 'fortran_order': True, 'shape': (1, 2), }",
                        string_pack(">f>f>f>f", 1, 2, 3, 4))
    assert.same({{{re = 1, im = 2}, {re = 3, im = 4}}}, dl.fromnpy(s):totable())
  end)

  it("fromnpy takes {device =}; copy = false raises COPY_REQUIRED (a string is copied)", function()
    local s = dl.tonpy(dl.arange(3))
    assert.equal(ENGINE .. ":0", dl.fromnpy(s, {device = ENGINE}).device)
    assert.same({0, 1, 2}, dl.fromnpy(s, {copy = true}):totable())
    expect_code("COPY_REQUIRED", dl.fromnpy, s, {copy = false})
  end)

  it("tonpy raises DTYPE for bfloat16", function()
    expect_code("DTYPE", dl.tonpy, dl.zeros(2, {dtype = "bfloat16"}))
  end)
end)

describe("a malformed .npy file", function()
  local header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"
  local data = string_pack("<i4<i4", 1, 2)

  it("raises FORMAT: not .npy, truncated, or a dict that is not what NumPy writes", function()
    expect_code("FORMAT", dl.fromnpy, "")
    expect_code("FORMAT", dl.fromnpy, "PK\3\4 this is a zip file")
    local good = npy_bytes(header, data)
    for n = 0, #good - 1 do -- cut anywhere
      expect_code("FORMAT", dl.fromnpy, good:sub(1, n))
    end
    expect_code("FORMAT", dl.fromnpy, npy_bytes("{'descr': '<i4', 'shape': (2,)}", data))
    expect_code("FORMAT", dl.fromnpy, npy_bytes(header:gsub("}$", "'extra': 1}"), data))
    expect_code("FORMAT", dl.fromnpy, npy_bytes(header:gsub("False", "0"), data))
    expect_code("FORMAT", dl.fromnpy, npy_bytes(header:gsub("%(2,%)", "(2)"), data))
    expect_code("FORMAT", dl.fromnpy, npy_bytes(header:gsub("<i4", "<i3"), data))
  end)

  it("raises FORMAT for a header length beyond the file", function()
    local s = npy_bytes(header, data)
    expect_code("FORMAT", dl.fromnpy, s:sub(1, 8) .. string_pack("<I2", 60000) .. s:sub(11))
  end)

  it("raises DTYPE, with a hint, for NumPy dtypes dlbridge lacks", function()
    for _, descr in ipairs{"<U5", "|O", "|V8", "<M8[ns]", "<f16"} do
      local err = expect_code("DTYPE", dl.fromnpy,
        npy_bytes("{'descr': '" .. descr .. "', 'fortran_order': False, 'shape': (1,), }",
                  ("\0"):rep(16)))
      assert.is_string(err.hint)
    end
    expect_code("DTYPE", dl.fromnpy,
      npy_bytes("{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0"))
  end)

  it("raises SHAPE for negative extents and sizes that overflow", function()
    expect_code("SHAPE", dl.fromnpy, npy_bytes(header:gsub("%(2,%)", "(-2,)"), data))
    expect_code("SHAPE", dl.fromnpy,
                npy_bytes(header:gsub("%(2,%)", "(4294967296, 4294967296)"), data))
  end)

  it("gives the same codes from a file", function()
    local path = temp_path()
    write_file(path, npy_bytes(header, data:sub(1, 5))) -- data cut short
    local err = expect_code("FORMAT", dl.load, path)
    assert.matches("truncated", err.message)
    write_file(path, "")
    expect_code("FORMAT", dl.load, path)
    expect_code("FORMAT", dl.load, path, {copy = true})
  end)
end)
