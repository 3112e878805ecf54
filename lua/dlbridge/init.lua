--- dlbridge: n-dimensional arrays for Lua, DLPack exchange, pluggable backends.
-- The C module (dlbridge.core) does the work; this file adds the conveniences
-- that are not hot paths. `require "dlbridge"` returns the core module table,
-- extended in place, so `dl.zeros == require("dlbridge.core").zeros`.
local core = require "dlbridge.core"

local dl = core
-- (5.1 and LuaJIT have no table.pack, and unpack is a global there)
local pack = table.pack or function(...) return { n = select("#", ...), ... } end
local unpack = table.unpack or unpack

--- dl.try(f, ...): calls f(...) and returns its results; a dlbridge.Error
-- comes back as `nil, err`; any other error is raised again unchanged.
function dl.try(f, ...)
  local r = pack(pcall(f, ...))
  if r[1] then return unpack(r, 2, r.n) end
  if dl.is_error(r[2]) then return nil, r[2] end
  error(r[2], 0)
end

--- dl.safe: the module's functions in `nil, err` form (lua-cjson's "safe"
-- twin): `local a, err = dl.safe.zeros{-1}` gives nil and a SHAPE error.
-- Read-only (shared by every script of the state), like dl.E.
local safe_functions = {}
dl.safe = dl.readonly(setmetatable(safe_functions, {
  __index = function(t, name)
    local f = dl[name]
    if type(f) ~= "function" then return nil end
    local safe = function(...) return dl.try(f, ...) end
    rawset(t, name, safe)
    return safe
  end,
  __metatable = false,
}))

--- dl.scope(f, ...): calls f(close, ...), where close(a) returns a and marks
-- it to be deleted (a:delete()) when f returns or raises, latest first; then
-- returns f's results or raises its error. What `local a <close> = ...` does
-- on Lua 5.4, on every Lua: `dl.scope(function(close) local t = close(dl.zeros{1e6}) ... end)`.
local array_delete = core.empty{0}.delete
function dl.scope(f, ...)
  local marked = {}
  local function close(a)
    -- not an array: Array:delete's own check raises the coded ARGUMENT error
    if not dl.is_array(a) then array_delete(a) end
    marked[#marked + 1] = a
    return a
  end
  local r = pack(pcall(f, close, ...))
  for i = #marked, 1, -1 do marked[i]:delete() end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

--- dl.traceback(err): a message handler for xpcall that keeps a dlbridge.Error
-- a table and adds `err.traceback`; other errors become debug.traceback text.
function dl.traceback(err)
  if dl.is_error(err) then
    err.traceback = debug.traceback("", 2)
    return err
  end
  return debug.traceback(err, 2)
end

return dl
