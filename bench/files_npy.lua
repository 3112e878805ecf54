-- bench/files_npy.lua: NumPy .npy files (issue 13). Each figure is the median
-- of ROUNDS rounds of CPU time (os.clock: the kernel's copies to and from the
-- page cache count), with its spread, against NumPy's (bench/files_npy_numpy.py
-- under /usr/bin/python3, Debian's python3-numpy, writing its files in the
-- same directory) alternated case by case (bench/support.lua).
-- Target: save and load of 256 MiB (float64) at >= 0.8x NumPy's speed, that
-- is a time ratio <= 1.25x: dl.save vs np.save, and dl.load(path, {copy =
-- true}) vs np.load (both read the file into new memory). dl.load's default
-- is a view of a mapping (np.load(path, mmap_mode = "r") does the same):
-- its time does not grow with the file. Lines without a target are for
-- reference. Under dl.tonpy, its floor against the same NumPy case: Lua's
-- own cost of making a string of that many bytes already at hand
-- (bench_floor.string: lua_pushlstring, whose allocation and first touch of
-- 256 MiB dominate), which every Lua string of that size pays. A
-- transposed array is written as its bytes lie, in Fortran order, on both
-- sides; under it, its floor: the same bytes written to a new file (its
-- blocks reserved first, as np.save does) renamed over the old one
-- (bench_floor.replace), the least a save that never leaves half a file
-- does, where np.save truncates the file and writes it in place.
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_DIR the directory of the
-- files (default: the system's temporary directory); BENCH_QUICK=1 uses
-- 32 MiB.
local dl = require "dlbridge"
local support = require "support"
local floor = require "bench_floor"

local ROUNDS = support.rounds(5)
local N = support.size(32 * 1024 * 1024, 4 * 1024 * 1024) -- float64 elements: 256 MiB
local ROWS = support.size(4096, 1024)
local COLS = N // ROWS

local scratch = os.tmpname()
local dir = os.getenv("BENCH_DIR") or scratch:match("^(.*)/[^/]*$") or "."
os.remove(scratch)
local path = dir .. "/dlbridge-bench-lua.npy"

local cmp = support.comparison{script = "files_npy_numpy.py", rounds = ROUNDS, width = 44,
                               args = {N = N, ROWS = ROWS, DIR = dir}}
local mib = N * 8 / 1024 / 1024
print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), files in %s", dl.version,
                    _VERSION, ROUNDS, dir))
cmp:header()

local function row(name, label, f, target, make)
  return cmp:row{name = name, label = label, f = f, make = make, target = target}
end

local a = dl.arange(N, {dtype = "float64"})
row("save_256MiB", string.format("dl.save %g MiB", mib), function() dl.save(path, a) end, 1.25)
row("load_copy_256MiB", string.format("dl.load %g MiB, copy = true", mib),
    function() dl.load(path, {copy = true}):delete() end, 1.25)
row("load_view_256MiB", string.format("dl.load %g MiB (a view of the mapping)", mib),
    function() dl.load(path):delete() end)
row("tonpy_256MiB", string.format("dl.tonpy %g MiB (a Lua string)", mib),
    function() local _ = dl.tonpy(a) end)
do
  local size = #dl.tonpy(a)
  cmp:print(cmp:measure{name = "tonpy_256MiB", label = "  floor: a Lua string of those bytes",
                        floor = true, f = function() local _ = floor.string(size) end})
end
row("fromnpy_256MiB", string.format("dl.fromnpy %g MiB (a copy)", mib), nil, nil, function()
  local s = dl.tonpy(a)
  return function() dl.fromnpy(s):delete() end
end)
local m = a:view{ROWS, COLS}
row("save_strided_128MiB", string.format("dl.save %g MiB, every other column", mib / 2),
    function() dl.save(path, m:slice(2, 1, COLS, 2)) end)
row("save_transposed_256MiB", string.format("dl.save %g MiB transposed (NumPy: F order)", mib),
    function() dl.save(path, m:transpose()) end)
do
  local size = N * 8 + 128 -- the data and a header of 128 bytes
  cmp:print(cmp:measure{name = "save_transposed_256MiB",
                        label = "  floor: a file of those bytes replaced", floor = true,
                        f = function() floor.replace(path, size) end})
end
os.remove(path)
cmp:finish()
