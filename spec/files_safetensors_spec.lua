-- files_safetensors_spec.lua -- safetensors files: saving and loading named tensors.
--
-- This file documents:
--   dl.save_safetensors(path, tensors, metadata)   writes a safetensors file;
--                      tensors is a table name -> array, metadata (optional)
--                      a table string -> string; returns nothing
--   dl.load_safetensors(path, opts) -> tensors, metadata
--                      the file's tensors (name -> array) and its
--                      __metadata__ (an empty table when it has none)
--   dl.tosafetensors(tensors, metadata)   the bytes save_safetensors writes
--   dl.fromsafetensors(s, opts) -> tensors, metadata   from a string (copies)
--   opts = {copy = true | false, device = "cpu"}
--
-- The format: 8 bytes N (little-endian), N bytes of JSON naming each tensor's
-- dtype, shape and byte range, then the data (little-endian, row-major).
-- dtypes: BOOL U8 U16 U32 U64 I8 I16 I32 I64 F16 BF16 F32 F64 C64 are bool,
-- uint8..uint64, int8..int64, float16, bfloat16, float32, float64,
-- complex64. complex128 has no safetensors dtype (DTYPE); nor do the
-- format's 4-, 6- and 8-bit floats have a dlbridge dtype (DTYPE on load).
--
-- dl.load_safetensors maps the file: every array is a READ-ONLY view of one
-- mapping, whatever the file's size; the mapping stays while any array, view
-- or DLPack export of it lives, and is unmapped once. A tensor that cannot
-- be viewed as it is -- data misaligned for its dtype (the format allows
-- it) or BOOL bytes other than 0 and 1 (true, loaded as 1) -- is a copy,
-- read-only like the views. opts.copy = true gives writable copies (read
-- from the file, nothing mapped); opts.copy = false raises COPY_REQUIRED
-- where only a copy would do.
-- Another device (opts.device) gets copies there.
--
-- Saving lists the tensors in the header by name and lays the data out by
-- item size, then name: the same tensors make the same bytes, and every
-- tensor is aligned for its dtype. Views are written in row-major order,
-- through one bounded buffer. It writes a new file beside path, removes the
-- old file and gives the new one its name: arrays still viewing the old file
-- keep its bytes, and no reader sees half a file (files_saving_spec.lua).
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"
local string_pack = support.string_pack     -- string.pack on every Lua (5.1 too)
local string_unpack = support.string_unpack -- string.unpack likewise

local expect_code = support.expect_code

local ENGINE = "engine_safetensors" -- a backend whose memory the host cannot address
if not support.registered(ENGINE) then tb.register{name = ENGINE} end

-- A fresh temporary path, removed when the test ends.
local temp_path = support.temp_path
after_each(support.remove_temp_files)

local write_file = support.write_file

-- A safetensors file built by hand, as the format says: the header's size
-- N as 8 bytes little-endian, the JSON header (padded with spaces to
-- `pad` bytes when given), then the data.
local function safetensors_bytes(json, data, pad)
  if pad then json = json .. string.rep(" ", pad - #json) end
  return string_pack("<I8", #json) .. json .. (data or "")
end

-- The lines of /proc/self/maps (Linux) that map path.
local function mappings_of(path)
  local n = 0
  for line in io.lines("/proc/self/maps") do
    if line:find(path, 1, true) then n = n + 1 end
  end
  return n
end

-- A model with a few tensors of different dtypes.
local function model()
  return {
    ["encoder.weight"] = dl.arange(6, {dtype = "float32"}):view(2, 3),
    ["encoder.bias"] = dl.array({0.5, -0.5}, {dtype = "float16"}),
    ["step"] = dl.array(1000, {dtype = "int64"}),
    ["mask"] = dl.array{true, false, true},
  }
end

describe("dl.save_safetensors and dl.load_safetensors", function()
  it("write named tensors with string metadata and read them back", function()
    local path = temp_path()
    dl.save_safetensors(path, model(), {format = "pt", note = "trained 3 epochs"})
    local tensors, metadata = dl.load_safetensors(path)
    assert.same({{0, 1, 2}, {3, 4, 5}}, tensors["encoder.weight"]:totable())
    assert.equal("float32", tensors["encoder.weight"].dtype)
    assert.same({0.5, -0.5}, tensors["encoder.bias"]:totable())
    assert.equal("float16", tensors["encoder.bias"].dtype)
    assert.equal(1000, tensors.step:get())
    assert.same({}, tensors.step.shape) -- 0-d
    assert.same({true, false, true}, tensors.mask:totable())
    assert.same({format = "pt", note = "trained 3 epochs"}, metadata)
  end)

  it("give an empty metadata table when the file has none", function()
    local path = temp_path()
    dl.save_safetensors(path, {x = dl.zeros(2)})
    local tensors, metadata = dl.load_safetensors(path)
    assert.same({0, 0}, tensors.x:totable())
    assert.same({}, metadata)
  end)

  it("keep every dtype the format shares with dlbridge, values exact", function()
    local path = temp_path()
    local tensors = {}
    local values = {
      bool = {true, false}, int8 = {-128, 127}, int16 = {-32768, 32767},
      int32 = {-2147483648, 2147483647},
      uint8 = {0, 255}, uint16 = {0, 65535}, uint32 = {0, 4294967295},
      float16 = {1.5, -65504}, bfloat16 = {1.5, -2}, float32 = {0.1, 1e30}, float64 = {0.1, -1e300},
    }
    for dtype, v in pairs(values) do tensors[dtype] = dl.array(v, {dtype = dtype}) end
    -- -2^63 and 2^63 - 1 (math.mininteger and math.maxinteger), from their bytes
    tensors.int64 = dl.frombytes("\0\0\0\0\0\0\0\128" .. "\255\255\255\255\255\255\255\127", "int64")
    tensors.uint64 = dl.full({2}, -1, {dtype = "int64"}):astype("uint64") -- 2^64 - 1
    tensors.complex64 = dl.array({{re = 1, im = -2}, {re = 0.5, im = 3}}, {dtype = "complex64"})
    dl.save_safetensors(path, tensors)
    local loaded = dl.load_safetensors(path)
    for name, a in pairs(tensors) do
      assert.equal(a.dtype, loaded[name].dtype)
      assert.equal(a:tobytes(), loaded[name]:tobytes(), name)
    end
  end)

  it("write views (transposed, sliced) in row-major order", function()
    local path = temp_path()
    local m = dl.arange(12, {dtype = "int32"}):view(3, 4)
    dl.save_safetensors(path, {t = m:transpose(), s = m:slice(2, 1, -1, 2)})
    local loaded = dl.load_safetensors(path)
    assert.same(m:transpose():totable(), loaded.t:totable())
    assert.same({{0, 2}, {4, 6}, {8, 10}}, loaded.s:totable())
    assert.is_true(loaded.t:is_contiguous())
  end)

  it("keep size-0 tensors and their shape", function()
    local path = temp_path()
    dl.save_safetensors(path, {empty = dl.zeros{0, 3}, x = dl.ones(1)})
    local loaded = dl.load_safetensors(path)
    assert.same({0, 3}, loaded.empty.shape)
    assert.same({1}, loaded.x:totable())
  end)

  it("load read-only views of the file's mapping, writable copies with copy = true", function()
    local path = temp_path()
    dl.save_safetensors(path, {w = dl.ones{2, 2}})
    local w = dl.load_safetensors(path).w
    assert.is_true(w.readonly)
    expect_code("READ_ONLY", w.set, w, 1, 1, 5)
    local c = dl.load_safetensors(path, {copy = true}).w
    assert.is_false(c.readonly)
    c:set(1, 1, 5)
    assert.equal(5, c:get(1, 1))
    assert.equal(1, w:get(1, 1))
  end)

  it("keep the mapping while any array or view of it lives, then unmap it", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(4):view(2, 2), b = dl.ones(3)})
    local tensors = dl.load_safetensors(path)
    local row = tensors.a[2] -- a view of tensor a
    assert.equal(1, mappings_of(path)) -- one mapping for every tensor
    tensors = nil
    collectgarbage()
    collectgarbage()
    assert.equal(1, mappings_of(path))
    assert.same({2, 3}, row:totable())
    row = nil
    collectgarbage()
    collectgarbage()
    assert.equal(0, mappings_of(path))
  end)

  it("work after the file is removed: the mapping holds the bytes", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(3)})
    local a = dl.load_safetensors(path).a
    os.remove(path)
    assert.same({0, 1, 2}, a:totable())
  end)

  it("save over the file the arrays were loaded from", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(1000)})
    local a = dl.load_safetensors(path).a
    dl.save_safetensors(path, {a = a * 2, b = a})
    assert.equal(999, a:get(1000)) -- still the old file's bytes
    local again = dl.load_safetensors(path)
    assert.equal(1998, again.a:get(1000))
    assert.equal(999, again.b:get(1000))
  end)

  it("load onto another device as copies there", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(3), m = dl.array{true, false}})
    local t = dl.load_safetensors(path, {device = ENGINE})
    assert.equal(ENGINE .. ":0", t.a.device)
    assert.same({0, 1, 2}, t.a:to("cpu"):totable())
    assert.same({true, false}, t.m:to("cpu"):totable())
    expect_code("COPY_REQUIRED", dl.load_safetensors, path, {device = ENGINE, copy = false})
    assert.equal("cpu:0", dl.load_safetensors(path, {device = "cpu"}).a.device)
  end)

  it("save arrays of other devices", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(4, {device = ENGINE}):view(2, 2):transpose()})
    assert.same({{0, 2}, {1, 3}}, dl.load_safetensors(path).a:totable())
  end)
end)

describe("the files dl.save_safetensors writes", function()
  it("hold the header size, the JSON header padded with spaces, then the data", function()
    local s = dl.tosafetensors({b = dl.array({1, 2}, {dtype = "uint8"}),
                                a = dl.array({1}, {dtype = "float32"})}, {k = "v"})
    local n = string_unpack("<I8", s)
    assert.equal(0, n % 8) -- the data starts at a multiple of 8
    assert.equal('{"__metadata__":{"k":"v"},'
      .. '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
      .. '"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}}', s:sub(9, 8 + n):match("^(.-) *$"))
    assert.equal(string_pack("<f", 1) .. "\1\2", s:sub(9 + n))
  end)

  it("lay out the data by item size, so that every tensor is aligned", function()
    local s = dl.tosafetensors{a = dl.ones(3, {dtype = "uint8"}),
                               b = dl.ones(1, {dtype = "float64"}),
                               c = dl.ones(1, {dtype = "int16"})}
    local n = string_unpack("<I8", s)
    local header = s:sub(9, 8 + n)
    assert.truthy(header:find('"b":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}', 1, true))
    assert.truthy(header:find('"c":{"dtype":"I16","shape":[1],"data_offsets":[8,10]}', 1, true))
    assert.truthy(header:find('"a":{"dtype":"U8","shape":[3],"data_offsets":[10,13]}', 1, true))
  end)

  it("are the same bytes for the same tensors", function()
    local t = model()
    assert.equal(dl.tosafetensors(t, {a = "1", b = "2"}), dl.tosafetensors(t, {b = "2", a = "1"}))
    local path = temp_path()
    dl.save_safetensors(path, t)
    local f = assert(io.open(path, "rb"))
    assert.equal(dl.tosafetensors(t), f:read("*a"))
    f:close()
  end)
end)

describe("dl.fromsafetensors(s, opts)", function()
  it("reads the bytes of a file held in a string, as writable copies", function()
    local s = dl.tosafetensors(model(), {format = "pt"})
    local tensors, metadata = dl.fromsafetensors(s)
    assert.same({{0, 1, 2}, {3, 4, 5}}, tensors["encoder.weight"]:totable())
    assert.is_false(tensors["encoder.weight"].readonly)
    assert.equal("pt", metadata.format)
    assert.equal(ENGINE .. ":0", dl.fromsafetensors(s, {device = ENGINE}).step.device)
  end)

  it("parses a header only when the host's memory limit has room for the parse", function()
    -- The JSON header's length is the file's (a script's) to choose, up to
    -- 100 MB; parsing it takes memory, charged to the limit while it runs.
    local json = '{"__metadata__":{"k":"' .. string.rep("v", 200000) .. '"}}'
    local s = string_pack("<I8", #json) .. json
    collectgarbage()
    tb.set_memory_limit(dl.memory().in_use + 1024 * 1024)
    local ok, err = pcall(dl.fromsafetensors, s)
    tb.set_memory_limit(0)
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    local _, metadata = dl.fromsafetensors(s)       -- without the limit: parsed
    assert.equal(200000, #metadata.k)
  end)

  it("raises COPY_REQUIRED with copy = false: a string's arrays are copies", function()
    expect_code("COPY_REQUIRED", dl.fromsafetensors, dl.tosafetensors{}, {copy = false})
  end)
end)

describe("files other writers make", function()
  it("load with an unpadded header and the keys in any order", function()
    local json = '{"x":{"shape":[2],"data_offsets":[0,2],"dtype":"I8"}}'
    local t = dl.fromsafetensors(safetensors_bytes(json, "\255\7"))
    assert.same({-1, 7}, t.x:totable())
  end)

  it("load a tensor whose data is misaligned for its dtype as a read-only copy", function()
    -- a byte of uint8 first puts the float32 at data offset 1
    local json = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
      .. '"f":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}}'
    local path = temp_path()
    write_file(path, safetensors_bytes(json, "\9" .. string_pack("<ff", 1.5, -2), 80))
    local t = dl.load_safetensors(path)
    assert.same({1.5, -2}, t.f:totable())
    assert.is_true(t.f.readonly)
    local e = expect_code("COPY_REQUIRED", dl.load_safetensors, path, {copy = false})
    assert.truthy(e.message:find("'f'", 1, true))
    assert.truthy(e.message:find("misaligned", 1, true))
    assert.same({1.5, -2}, dl.load_safetensors(path, {copy = true}).f:totable())
  end)

  it("load BOOL bytes other than 0 and 1 as true", function()
    local json = '{"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}'
    local path = temp_path()
    write_file(path, safetensors_bytes(json, "\0\2\255", 64))
    local m = dl.load_safetensors(path).m
    assert.same({false, true, true}, m:totable())
    assert.equal("\0\1\1", m:tobytes())
    expect_code("COPY_REQUIRED", dl.load_safetensors, path, {copy = false})
  end)
end)

describe("hostile or broken files", function()
  local f32 = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'

  it("raise FORMAT when truncated, whatever the cut", function()
    local s = safetensors_bytes(f32, string_pack("<ff", 1, 2), 56)
    for cut = 0, #s - 1 do
      expect_code("FORMAT", dl.fromsafetensors, s:sub(1, cut))
    end
  end)

  it("raise FORMAT for a header size larger than the file, or overflowing", function()
    expect_code("FORMAT", dl.fromsafetensors, string_pack("<I8", 1000) .. "{}")
    expect_code("FORMAT", dl.fromsafetensors, string_pack("<i8", -1) .. "{}      ")
  end)

  it("raise FORMAT for a header that is no JSON object", function()
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes("[1, 2]"))
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes('{"a": '))
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes('{} trailing'))
  end)

  it("raise DTYPE naming the tensor for a dtype dlbridge lacks", function()
    local json = '{"scale":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}'
    local e = expect_code("DTYPE", dl.fromsafetensors, safetensors_bytes(json, "\0\0"))
    assert.truthy(e.message:find("'scale'", 1, true))
    assert.truthy(e.message:find("F8_E4M3", 1, true))
  end)

  it("raise SHAPE for extents that are not integers >= 0, or a byte size that overflows", function()
    local function with_shape(shape)
      return safetensors_bytes('{"a":{"dtype":"F64","shape":' .. shape .. ',"data_offsets":[0,0]}}')
    end
    expect_code("SHAPE", dl.fromsafetensors, with_shape("[-1]"))
    expect_code("SHAPE", dl.fromsafetensors, with_shape("[2.5]"))
    expect_code("SHAPE", dl.fromsafetensors, with_shape("[4294967296,4294967296]"))
    expect_code("SHAPE", dl.fromsafetensors, with_shape("[4503599627370496,1024]"))
  end)

  it("raise FORMAT when the offsets disagree with the shape or lie outside the data", function()
    local json = '{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}'
    local e = expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes(json, ("\0"):rep(8)))
    assert.truthy(e.message:find("3 F32 elements take 12", 1, true))
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes(f32, ("\0"):rep(4)))
  end)

  it("raise FORMAT for overlapping tensors, holes, and names given twice", function()
    local overlap = '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
      .. '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}'
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes(overlap, "abc"))
    local hole = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes(hole, "ab"))
    local twice = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
      .. '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}'
    local e = expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes(twice, "ab"))
    assert.truthy(e.message:find("twice", 1, true))
  end)

  it("raise FORMAT for metadata that is not strings", function()
    expect_code("FORMAT", dl.fromsafetensors, safetensors_bytes('{"__metadata__":{"epoch":3}}'))
  end)

  it("raise IO for a file that cannot be opened, with the system's errno", function()
    local e = expect_code("IO", dl.load_safetensors, "/nonexistent/model.safetensors")
    assert.equal(2, e.status) -- ENOENT
    assert.equal(21, expect_code("IO", dl.load_safetensors, "/tmp").status) -- a directory: EISDIR
  end)
end)

describe("misuse", function()
  it("raises ARGUMENT for arguments of the wrong type", function()
    expect_code("ARGUMENT", dl.load_safetensors, 42)
    expect_code("ARGUMENT", dl.fromsafetensors, nil)
    expect_code("ARGUMENT", dl.save_safetensors, temp_path(), dl.zeros(2))
    expect_code("ARGUMENT", dl.save_safetensors, temp_path(), {a = {1, 2}})
    expect_code("ARGUMENT", dl.tosafetensors, {dl.zeros(2)}) -- the name is no string
    expect_code("ARGUMENT", dl.tosafetensors, {a = dl.zeros(2)}, {epoch = 3})
    expect_code("ARGUMENT", dl.tosafetensors, {a = dl.zeros(2)}, "pt")
  end)

  it("raises ARGUMENT for a tensor named __metadata__ (reserved by the format)", function()
    expect_code("ARGUMENT", dl.tosafetensors, {__metadata__ = dl.zeros(2)})
  end)

  it("raises ARGUMENT for an unknown option or a copy that is no boolean", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.zeros(1)})
    expect_code("ARGUMENT", dl.load_safetensors, path, {cpoy = true})
    expect_code("ARGUMENT", dl.load_safetensors, path, {copy = "yes"})
    expect_code("ARGUMENT", dl.fromsafetensors, dl.tosafetensors{}, {names = {"a"}})
  end)

  it("raises DTYPE for complex128, with a hint", function()
    local e = expect_code("DTYPE", dl.tosafetensors, {z = dl.zeros(2, {dtype = "complex128"})})
    assert.truthy(e.hint:find("complex64", 1, true))
  end)

  it("raises DELETED for a deleted array", function()
    local a = dl.zeros(2)
    a:delete()
    expect_code("DELETED", dl.tosafetensors, {a = a})
  end)

  it("raises IO when the file cannot be written, with the system's errno", function()
    local e = expect_code("IO", dl.save_safetensors, "/nonexistent/model.safetensors",
                          {a = dl.zeros(1)})
    assert.equal(2, e.status) -- ENOENT
    assert.truthy(e.message:find("/nonexistent/model.safetensors", 1, true))
  end)

  it("raises IO for a path that is no regular file (never replaced)", function()
    assert.equal(21, expect_code("IO", dl.save_safetensors, "/tmp", {a = dl.zeros(1)}).status)
  end)
end)
