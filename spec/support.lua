-- support.lua -- helpers shared by the specs.
--
--   local support = require "support"   -- .busted puts spec/?.lua on the path
--
-- Not a spec itself: busted only runs files whose names match "_spec".
local dl = require "dlbridge"
local assert = require "luassert"  -- the same object busted gives the specs

local support = {}

-- Calls f(...) expecting a dlbridge.Error; `succeeded` is the message if it
-- does not fail. Returns the error object.
local function raised(succeeded, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, succeeded)
  assert.is_true(dl.is_error(err), "expected a dlbridge.Error, got " .. type(err) .. ": "
    .. tostring(err))
  return err
end

-- The dlbridge.Error that f(...) raises (fails the test if f succeeds or
-- raises anything else).
function support.error_of(f, ...)
  return raised("expected the call to fail", f, ...)
end

-- The code of the dlbridge.Error that f(...) raises (checked as error_of does).
function support.code_of(f, ...)
  return raised("expected the call to fail", f, ...).code
end

-- expect_code("SHAPE", f, ...): f(...) must raise a dlbridge.Error with that
-- code. Returns the error.
function support.expect_code(code, f, ...)
  local err = raised("expected " .. code .. ", but the call succeeded", f, ...)
  assert.equal(code, err.code, tostring(err))
  return err
end

-- Resident memory of this process, in MiB (reads VmRSS from Linux's
-- /proc/self/status).
function support.rss_mib()
  local f = io.open("/proc/self/status", "r")
  assert(f, "cannot open /proc/self/status: these memory checks need Linux's /proc")
  local status = f:read("a")
  f:close()
  local kb = status:match("VmRSS:%s*(%d+)%s*kB")
  assert(kb, "no VmRSS line in /proc/self/status")
  return tonumber(kb) / 1024
end

-- The dl.backends() entry named name, or nil.
function support.backend_info(name)
  for _, b in ipairs(dl.backends()) do
    if b.name == name then return b end
  end
end

-- Whether a backend named name is registered. Backend names are per
-- lua_State and busted runs every spec file in one state, so a file
-- registers its test backends only when this is false.
function support.registered(name)
  return support.backend_info(name) ~= nil
end

-- A read-only array: expand broadcasts with stride 0.
function support.readonly_array()
  return dl.array{1, 2, 3}:view{1, 3}:expand{2, 3}
end

-- Files: support.temp_path() is a fresh temporary path; a spec file that
-- uses it removes them all after each test with
-- after_each(support.remove_temp_files).
local temp_paths = {}
function support.temp_path()
  local path = os.tmpname()
  temp_paths[#temp_paths + 1] = path
  return path
end

function support.remove_temp_files()
  for _, path in ipairs(temp_paths) do os.remove(path) end
  temp_paths = {}
end

-- The bytes of the file at path.
function support.file_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Writes the string s as the file at path.
function support.write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return support
