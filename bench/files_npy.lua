-- bench/files_npy.lua: NumPy .npy files (issue 13). Each figure is the median
-- of ROUNDS rounds of CPU time (os.clock: the kernel's copies to and from the
-- page cache count), printed with NumPy's measured in the same run
-- (bench/files_npy_numpy.py under /usr/bin/python3, Debian's python3-numpy,
-- writing its files in the same directory) and the ratio of the times.
-- Target: save and load of 256 MiB (float64) at >= 0.8x NumPy's speed, that
-- is a time ratio <= 1.25x: dl.save vs np.save, and dl.load(path, {copy =
-- true}) vs np.load (both read the file into new memory). dl.load's default
-- is a view of a mapping (np.load(path, mmap_mode = "r") does the same):
-- its time does not grow with the file. Lines "for reference" have no target:
-- dl.tonpy's time is Lua's cost of making a 256 MiB string (string.rep of
-- that size costs as much here); a transposed array is written transposed
-- (C order always), where np.save writes the Fortran-order bytes as they lie.
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_DIR the directory of the
-- files (default: the system's temporary directory).
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS")) or 5
local N = 32 * 1024 * 1024 -- float64 elements: 256 MiB
local ROWS, COLS = 4096, 8192

local function median(f) return support.median_time(f, ROUNDS) end

local scratch = os.tmpname()
local dir = os.getenv("BENCH_DIR") or scratch:match("^(.*)/[^/]*$") or "."
os.remove(scratch)
local path = dir .. "/dlbridge-bench-lua.npy"

-- NumPy's figures by name, from the same run.
local numpy = support.numpy_figures("files_npy_numpy.py", ROUNDS .. " '" .. dir .. "'")

local function report(name, label, seconds, target)
  local base = numpy[name]
  if base then
    print(string.format("%-44s %9.3f ms   NumPy %9.3f ms   ratio %5.2fx  %s", label,
                        seconds * 1e3, base * 1e3, seconds / base,
                        target and string.format("(target <= %gx)", target) or "(for reference)"))
  else
    print(string.format("%-44s %9.3f ms   (no NumPy figure)", label, seconds * 1e3))
  end
end

print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), files in %s", dl.version,
                    _VERSION, ROUNDS, dir))
local a = dl.arange(N, {dtype = "float64"})
report("save_256MiB", "dl.save 256 MiB", median(function() dl.save(path, a) end), 1.25)
report("load_copy_256MiB", "dl.load 256 MiB, copy = true",
       median(function() dl.load(path, {copy = true}):delete() end), 1.25)
report("load_view_256MiB", "dl.load 256 MiB (a view of the mapping)",
       median(function() dl.load(path):delete() end))
local s = dl.tonpy(a)
report("tonpy_256MiB", "dl.tonpy 256 MiB (a Lua string)",
       median(function() local _ = dl.tonpy(a) end))
report("fromnpy_256MiB", "dl.fromnpy 256 MiB (a copy)",
       median(function() dl.fromnpy(s):delete() end))
s = nil
collectgarbage()
local m = a:view{ROWS, COLS}
report("save_strided_128MiB", "dl.save 128 MiB, every other column",
       median(function() dl.save(path, m:slice(2, 1, COLS, 2)) end))
report("save_transposed_256MiB", "dl.save 256 MiB transposed (NumPy: F order)",
       median(function() dl.save(path, m:transpose()) end))
os.remove(path)
