-- error_printing_spec.lua -- how a dlbridge.Error reads as text.
--
--   tostring(err)   "script.lua:12: dlbridge: SHAPE: message (hint: ...)"
--   "x" .. err      Lua's own error, as for any table: write "x" .. tostring(err)
--
-- The text leads with err.where, the file and line of the Lua code that made
-- the failing call, as Lua's own error messages do. So a script that does not
-- catch the error still says where it failed: the lua interpreter prints an
-- error object through its __tostring:
--
--   $ lua5.4 script.lua
--   lua5.4: script.lua:3: dlbridge: SHAPE: cannot reshape 6 elements into 16 (hint: ...)
--
-- (So do LuaJIT's and Lua 5.2's and later. Lua 5.1's interpreter prints any
-- error object that is not a string as "(error object is not a string)":
-- there a script catches the error and prints tostring(err) itself.)
--
-- A call made from C (pcall(dl.zeros, ...), a host's lua_pcall) has no Lua
-- line: err.where is "" and the text starts with "dlbridge: ".
local dl = require "dlbridge"

-- Lua's message for concatenating an error object: Lua 5.3 and later name
-- the value by its metatable's __name, 5.1, 5.2 and LuaJIT say "table".
local CONCAT_ERROR = math.type and "attempt to concatenate a dlbridge.Error value"
  or "attempt to concatenate"
local support = require "support"

-- A shell word for s (single quotes).
local function quoted(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- The interpreter these specs run on ("lua5.4", "luajit", ...).
local LUA = support.lua_command()
-- Whether it prints an uncaught error object through its __tostring (all but lua5.1).
local PRINTS_ERROR_OBJECTS = LUA ~= "lua5.1"

-- Runs the interpreter on the script text with this process's module paths;
-- returns what it printed (stdout and stderr) and its exit status.
local function run_script(text)
  local path = os.tmpname()
  local file = assert(io.open(path, "w"))
  file:write(text)
  file:close()
  -- the shell reports the status: Lua 5.1's and LuaJIT's pipe:close() do not
  local command = ("LUA_PATH=%s LUA_CPATH=%s %s %s 2>&1; echo \"exit status $?\""):format(
    quoted(package.path), quoted(package.cpath), LUA, quoted(path))
  local pipe = assert(io.popen(command))
  local output = pipe:read("*a")
  pipe:close()
  os.remove(path)
  local printed, status = output:match("^(.*)exit status (%d+)\n$")
  return printed, tonumber(status), path
end

describe("an uncaught error printed by the lua interpreter", function()
  it("names the script's file and line, then the code, message and hint", function()
    local output, status, path = run_script([[
local dl = require "dlbridge"
local a = dl.arange(6)
local b = a:view{16}
print(b)
]])
    assert.equal(1, status)
    local expected = LUA .. ": " .. path .. ":3: dlbridge: SHAPE: cannot reshape 6 elements "
      .. "into 16 (hint: "
    if not PRINTS_ERROR_OBJECTS then expected = LUA .. ": (error object is not a string)" end
    assert.equal(expected, output:sub(1, #expected), output)
  end)

  it("keeps the location when the script catches the error and raises it again", function()
    local output, status, path = run_script([[
local dl = require "dlbridge"
local ok, err = pcall(function()
  local z = dl.zeros(2, "int32")
  return z
end)
assert(not ok)
error(err, 0) -- the same object: its where is line 3
]])
    assert.equal(1, status)
    if PRINTS_ERROR_OBJECTS then
      assert.matches(path:gsub("%p", "%%%0") .. ":3: dlbridge: ARGUMENT: ", output)
    else
      assert.matches("(error object is not a string)", output, 1, true)
    end
  end)

  it("prints what the script prints: tostring(err), with the location, on every Lua", function()
    local output, status, path = run_script([[
local dl = require "dlbridge"
local ok, err = pcall(function()
  local z = dl.zeros(2, "int32")
  return z
end)
io.stderr:write(tostring(err), "\n")
os.exit(1)
]])
    assert.equal(1, status)
    assert.matches("^" .. path:gsub("%p", "%%%0") .. ":3: dlbridge: ARGUMENT: ", output)
  end)
end)

describe("tostring(err)", function()
  it("leads with where the calling Lua line is", function()
    local ok, err = pcall(function()
      local a = dl.arange(6):view(4, 4)
      return a
    end)
    assert.is_false(ok)
    assert.matches("^.*error_printing_spec%.lua:%d+: dlbridge: SHAPE: ", tostring(err))
    assert.equal(err.where .. "dlbridge: SHAPE: " .. err.message .. " (hint: " .. err.hint .. ")",
      tostring(err))
  end)

  it("has no location for a call made from C", function()
    local err = support.error_of(dl.zeros, -1) -- pcall calls dl.zeros: no Lua line
    assert.equal("", err.where)
    assert.matches("^dlbridge: SHAPE: ", tostring(err))
  end)

  it("is what to concatenate: an error object itself does not concatenate", function()
    local err = support.error_of(dl.zeros, -1)
    assert.matches("^failed: dlbridge: SHAPE", "failed: " .. tostring(err))
    -- Lua's own error, as for any table (Debian's Lua 5.4.4 mishandles the
    -- stack around a __concat metamethod, so dlbridge.Error has none).
    local ok, message = pcall(function() return "failed: " .. err end)
    assert.is_false(ok)
    assert.matches(CONCAT_ERROR, message)
  end)

  it("never corrupts the Lua stack when a script concatenates it anyway", function()
    -- "a" .. err .. "x" in the last registers of a frame, in coroutines whose
    -- stacks end at every distance from it: with a __concat metamethod, the
    -- call that moves the stack made Debian's lua5.4 run on the freed stack
    -- ("attempt to call a nil value", wrong results, crashes).
    local err = support.error_of(dl.zeros, -1)
    local function concat_at_frame_end()
      local x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20
      return "a" .. err .. "x"
    end
    for depth = 0, 60 do
      local function nest(k)
        if k == 0 then return pcall(concat_at_frame_end) end
        local ok, message = nest(k - 1) -- not a tail call: every level a frame
        return ok, message
      end
      local ok, message = coroutine.wrap(nest)(depth)
      assert.is_false(ok)
      assert.matches(CONCAT_ERROR, message, "depth " .. depth)
    end
  end)
end)
