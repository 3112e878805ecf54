-- files_saving_spec.lua -- how dl.save and dl.save_safetensors write files.
--
-- This file documents what both formats' saves share (one writer):
-- - the bytes go to a new file beside the target; when all are written, it
--   is renamed over the old one. Arrays still mapping
--   the old file keep its contents, no reader sees half a file, a failure
--   leaves the old file as it was, and the old file's mode is kept;
-- - an array is written in its logical (row-major) order (dl.save writes a
--   Fortran-contiguous one, such as a transposed matrix, as its bytes lie
--   with 'fortran_order': True, as np.save does): contiguous host memory
--   straight from the array, anything else (a sliced or permuted view, the
--   other byte order, memory the host cannot address) copied chunk by chunk
--   through one buffer of at most 16 MiB, never as a whole copy.
--   Saving large views costs about 16 MiB of memory, however many there are.
--
-- The memory checks read the peak resident size (VmHWM, reset through
-- /proc/self/clear_refs: Linux). They carry the tag #rss: the sanitizer run
-- (.ci/run) excludes that tag, because there RSS measures the sanitizer's
-- own memory.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

local temp_path = support.temp_path
after_each(support.remove_temp_files)

local file_bytes = support.file_bytes

-- Resets the peak resident size to the current one; returns it in MiB.
local function reset_peak()
  local f = assert(io.open("/proc/self/clear_refs", "w"), "these checks need Linux's /proc")
  f:write("5")
  f:close()
  return support.rss_mib()
end

-- The peak resident size since the last reset, in MiB.
local function peak_mib()
  local f = assert(io.open("/proc/self/status", "r"))
  local kb = f:read("*a"):match("VmHWM:%s*(%d+)%s*kB")
  f:close()
  return tonumber(kb) / 1024
end

-- Two 64 MiB float32 arrays, permuted (views contiguous in neither order).
local function two_permuted()
  local a = dl.arange(2 ^ 24, {dtype = "float32"}):view(64, 256, 1024)
  local b = a + 1
  return a:permute{2, 1, 3}, b:permute{2, 1, 3}
end

describe("saving views", function()
  it("streams them through one bounded buffer, in both formats #rss", function()
    local path = temp_path()
    local at, bt = two_permuted()
    collectgarbage()
    local before = reset_peak()
    dl.save_safetensors(path, {a = at, b = bt})
    local safetensors_growth = peak_mib() - before
    before = reset_peak()
    dl.save(path, at)
    local npy_growth = peak_mib() - before
    -- 16 MiB of buffer and some slack; a whole copy of each would be 128 MiB
    assert.is_true(safetensors_growth < 40, ("dl.save_safetensors of two 64 MiB views grew "
      .. "the peak by %.1f MiB"):format(safetensors_growth))
    assert.is_true(npy_growth < 40,
      ("dl.save of a 64 MiB view grew the peak by %.1f MiB"):format(npy_growth))
  end)

  it("writes them in row-major order, as a copy would be written", function()
    local path, copy_path = temp_path(), temp_path()
    local m = dl.arange(24, {dtype = "int16"}):view(2, 3, 4)
    local views = {t = m:permute{3, 1, 2}, r = m:slice(3, -1, 1, -1), s = m:select(2, 2)}
    local copies = {}
    for name, v in pairs(views) do copies[name] = v:copy() end
    dl.save_safetensors(path, views)
    dl.save_safetensors(copy_path, copies)
    assert.equal(file_bytes(copy_path), file_bytes(path))
    dl.save(path, views.r)
    dl.save(copy_path, copies.r)
    assert.equal(file_bytes(copy_path), file_bytes(path))
  end)
end)

describe("replacing a file", function()
  it("keeps the old file for arrays that map it, and its mode", function()
    local path = temp_path()
    dl.save_safetensors(path, {a = dl.arange(4)})
    os.execute("chmod 640 " .. path)
    local old = dl.load_safetensors(path).a
    dl.save_safetensors(path, {a = old * 10}) -- written beside, then renamed
    assert.same({0, 1, 2, 3}, old:totable())
    assert.same({0, 10, 20, 30}, dl.load_safetensors(path).a:totable())
    local p = io.popen("stat -c %a " .. path)
    assert.equal("640", p:read("*l"))
    p:close()
  end)

  it("leaves the old file as it was when the save fails", function()
    local path = temp_path()
    dl.save(path, dl.arange(3))
    local before = file_bytes(path)
    expect_code("DTYPE", dl.save, path, dl.zeros(2, {dtype = "bfloat16"}))
    expect_code("DTYPE", dl.save_safetensors, path, {z = dl.zeros(2, {dtype = "complex128"})})
    assert.equal(before, file_bytes(path))
  end)
end)
