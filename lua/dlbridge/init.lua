--- dlbridge: n-dimensional arrays for Lua, DLPack exchange, pluggable backends.
-- The C module (dlbridge.core) does the work; this file adds the conveniences
-- that are not hot paths. `require "dlbridge"` returns the core module table,
-- extended in place, so `dl.zeros == require("dlbridge.core").zeros`.
local core = require "dlbridge.core"

local dl = core
local pack, unpack = table.pack, table.unpack

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
