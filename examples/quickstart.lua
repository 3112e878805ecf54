-- quickstart.lua: a first tour of dlbridge. Run it with the README's first command.
local dl = require "dlbridge"

-- Create: nested tables infer the dtype as NumPy does (integers -> int64).
local a = dl.array{{1, 2, 3}, {4, 5, 6}}
print("a =", a)
print("shape", table.concat(a.shape, "x"), "dtype", a.dtype, "device", a.device)

-- Index: 1-based, negative counts from the end; a[i] of a 2-D array is a row view.
print("a[2][3] =", a[2][3], "  a:get(-1, 1) =", a:get(-1, 1))

-- Views share memory: writing through a view changes the base.
local col = a:select(2, 2)      -- the second column
col[1] = 20
print("after col[1] = 20, a[1] =", a[1])

-- Slice with a negative step walks backwards.
print("reversed columns:", a:slice(2, -1, 1, -1))

-- Creation helpers and dtypes.
local img = dl.zeros({4, 4}, {dtype = "float32"})
img:fill(0.5)
print("img:", img)
print("arange:", dl.arange(0, 1, 0.25))

-- Errors are tables with a stable code and a hint; pcall catches them.
local ok, err = pcall(function() return a:view{4, 4} end)
print("pcall ok?", ok)
print("error code:", err.code)
print("error hint:", err.hint)
print("tostring:", tostring(err))

-- The nil, err form: dl.try and dl.safe.
local b, e = dl.safe.zeros{-3}
print("dl.safe.zeros{-3} ->", b, e.code)

-- Free memory now; <close> does it at scope exit.
do
  local big <close> = dl.ones{1024, 1024}
  print("big.nbytes =", big.nbytes)
end
a:delete()
print("after delete:", tostring(a))
