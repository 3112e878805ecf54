-- quickstart.lua: a first tour of dlbridge, run inside the embedding host demo
-- (examples/host), which registers a backend "engine" whose memory never leaves
-- it and a native consumer engine.analyze(capsule). The README's first command
-- builds the host and runs this file:  build/bin/dlbridge-host examples/quickstart.lua
local dl = require "dlbridge"

local function step(text) print("\n== " .. text) end

step("1. Arrays: create, index, slice, print")
local a = dl.array{{1, 2, 3}, {4, 5, 6}}   -- integers infer int64, as in NumPy
print(a)
print("a[2][3] =", a[2][3], " a:get(-1, 1) =", a:get(-1, 1), " (1-based, -1 is the last)")
local column = a:select(2, 2)               -- a view: it shares a's memory
column[1] = 20
print("after column[1] = 20, row 1 is", a[1])
print("columns reversed:", a:slice(2, -1, 1, -1))

step("2. Errors are tables with a code and a hint")
local ok, err = pcall(function() return a:view{4, 4} end)
print("pcall ->", ok, err.code)
print("hint:", err.hint)

step("3. The seed's case: an image on a backend that cannot hand out a pointer")
for _, b in ipairs(dl.backends()) do
  print(("backend %-7s exportable=%-5s devices=%d"):format(b.name, tostring(b.exportable), b.devices))
end
local image = dl.zeros({4, 4, 3}, {dtype = "float32", device = "engine"})
for y = 1, 4 do
  for x = 1, 4 do image[y][x] = {x / 4, y / 4, 0.5} end   -- an RGB gradient, written row by row
end
print("image:", image.device, table.concat(image.shape, "x"), image.dtype)

step("4. Exporting it directly fails with a coded, catchable error")
ok, err = pcall(image.to_dlpack, image)
print("pcall(image.to_dlpack, image) ->", ok, err.code)
print("backend:", err.backend, " device:", err.device, " op:", err.op)
print("hint:", err.hint)

step("5. Recover: move it to the cpu, export, let the native consumer read it")
local on_cpu = dl.device_put(image, "cpu")
local stats = engine.analyze(on_cpu:to_dlpack())
print(("engine.analyze: count=%d min=%.3f max=%.3f mean=%.4f"):format(stats.count, stats.min,
                                                                    stats.max, stats.mean))

step("6. The same in one line: export a host copy when the backend cannot export")
stats = engine.analyze(image:to_dlpack{fallback = "cpu"})
print(("engine.analyze: count=%d min=%.3f max=%.3f mean=%.4f"):format(stats.count, stats.min,
                                                                    stats.max, stats.mean))

step("7. Free memory now; dl.scope does it when its function ends")
-- close(a) returns a and deletes it when the function returns or raises, on
-- every Lua; on Lua 5.4, `local scratch <close> = ...` in a block does the same.
dl.scope(function(close)
  local scratch = close(dl.ones({256, 256}, {device = "engine"}))
  print("scratch.nbytes =", scratch.nbytes)
end)
image:delete()
print("after delete:", tostring(image))
