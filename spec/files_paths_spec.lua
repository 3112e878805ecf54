-- files_paths_spec.lua -- the paths the file functions take.
--
-- This file documents what every function taking a path accepts:
--   dl.save(path, a), dl.load(path, opts)
--   dl.save_safetensors(path, tensors, metadata), dl.load_safetensors(path, opts)
--
-- A path is a Lua string naming a regular file. One check serves all four:
-- - a path holding a zero byte ("x.npy\0junk") raises ARGUMENT: the system
--   would read it as the shorter name "x.npy", so it is never passed on;
-- - a path naming something that is no regular file (a directory, a FIFO, a
--   device, a socket) raises IO at once, without reading, writing or waiting:
--   err.status is EISDIR (21) for a directory, EINVAL (22) for the others. A
--   FIFO is never opened in a way that waits for a writer, so a script cannot
--   hang its host by loading one;
-- - what the system refuses (a missing file, no permission) raises IO with
--   the system's errno in err.status.
local dl = require "dlbridge"
local support = require "support"

local expect_code = support.expect_code

local temp_path = support.temp_path
after_each(support.remove_temp_files)

local EISDIR, EINVAL = 21, 22

-- The four functions, each called on path with an argument that would work.
local function calls(path)
  return {
    ["dl.save"] = function() return dl.save(path, dl.arange(3)) end,
    ["dl.load"] = function() return dl.load(path) end,
    ["dl.load copy"] = function() return dl.load(path, {copy = true}) end,
    ["dl.save_safetensors"] = function() return dl.save_safetensors(path, {a = dl.arange(3)}) end,
    ["dl.load_safetensors"] = function() return dl.load_safetensors(path) end,
    ["dl.load_safetensors copy"] = function() return dl.load_safetensors(path, {copy = true}) end,
  }
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A FIFO (named pipe) at a fresh path. Should a load wait for a writer after
-- all, writers come after two seconds, as long as the FIFO exists (for ten
-- seconds at most): such a load then fails with another code than IO
-- instead of hanging the run. (dd's nocreat: a writer never makes a file.)
local function fifo()
  local path = temp_path()
  os.remove(path)
  assert(os.execute("mkfifo " .. path), "mkfifo failed")
  os.execute(("timeout 10 sh -c 'sleep 2; while dd if=/dev/null of=%s conv=nocreat "
              .. "status=none; do :; done' >/dev/null 2>&1 &"):format(path))
  return path
end

describe("a path with a zero byte", function()
  it("raises ARGUMENT in every file function, and names no file", function()
    local path = temp_path()
    os.remove(path)
    for name, call in pairs(calls(path .. "\0junk")) do
      local err = expect_code("ARGUMENT", call)
      assert.truthy(err.message:find("zero byte", 1, true), name)
    end
    assert.is_false(exists(path)) -- no save wrote the name before the zero byte
    dl.save(path, dl.arange(3))
    expect_code("ARGUMENT", dl.load, path .. "\0")
    dl.save_safetensors(path, {a = dl.arange(3)})
    expect_code("ARGUMENT", dl.load_safetensors, path .. "\0.npy")
  end)
end)

describe("a path that names no regular file", function()
  it("raises IO for a FIFO at once, without waiting for a writer", function()
    -- (an open that waited would wait for good: the test's timeout would fail it)
    local path = fifo()
    for name, call in pairs(calls(path)) do
      local err = expect_code("IO", call)
      assert.equal(EINVAL, err.status, name)
      assert.truthy(err.message:find("not a regular file", 1, true), name)
    end
  end)

  it("raises IO for a directory (EISDIR) and a device (EINVAL)", function()
    for name, call in pairs(calls("/tmp")) do
      assert.equal(EISDIR, expect_code("IO", call).status, name)
    end
    for name, call in pairs(calls("/dev/null")) do
      assert.equal(EINVAL, expect_code("IO", call).status, name)
    end
  end)

  it("raises IO with the system's errno for a missing file", function()
    for name, call in pairs(calls("/no/such/dir/x.npy")) do
      assert.equal(2, expect_code("IO", call).status, name) -- ENOENT
    end
  end)
end)
