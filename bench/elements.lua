-- bench/elements.lua: element access and table conversion, as ratios to plain Lua tables.
-- Run: lua5.4 bench/elements.lua   (with LUA_PATH/LUA_CPATH set; bench/run does that)
-- Prints the median of several rounds, in ns per element, and the ratio to the
-- baseline measured in the same run. Targets (issue 2): a[i] read/write <= 3x a
-- plain table; dl.array(t) and a:totable() <= 2x a plain loop that reads t.
-- The "floor" rows time an empty C metamethod: no userdata __index can beat it.
local dl = require "dlbridge"

local support = require "support"

local N = tonumber(os.getenv("BENCH_N")) or support.size(1000000, 100000)
local ROUNDS = support.rounds(7)
local function median_time(f) return support.median_time(f, ROUNDS) end

local function report(name, seconds, baseline_name, baseline_seconds, target)
  local ns = seconds / N * 1e9
  local base_ns = baseline_seconds / N * 1e9
  local ratio = seconds / baseline_seconds
  print(string.format("%-28s %7.2f ns/elem   %-26s %7.2f ns/elem   ratio %5.2fx  (target <= %gx)",
                      name, ns, baseline_name, base_ns, ratio, target))
end

local t = {}
for i = 1, N do t[i] = i * 0.5 end
local a = dl.array(t)
local sink = 0.0

local table_read = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + t[i] end
  sink = sink + s
end)
local array_read = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + a[i] end
  sink = sink + s
end)
local table_write = median_time(function()
  for i = 1, N do t[i] = i * 0.25 end
end)
local array_write = median_time(function()
  for i = 1, N do a[i] = i * 0.25 end
end)
-- The floor: the same loops through an empty C __index / __newindex.
local floor = require("bench_floor")()
local floor_read = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + floor[i] end
  sink = sink + s
end)
local floor_write = median_time(function()
  for i = 1, N do floor[i] = i * 0.25 end
end)
-- The checked floor: the least a safe C access does (identify the userdata,
-- check and convert key and value), over 16 elements (i % 16 + 1).
local checked = require("bench_floor").checked()
local a16 = dl.zeros{16}
local checked_read = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + checked[i % 16 + 1] end
  sink = sink + s + 1
end)
local checked_write = median_time(function()
  for i = 1, N do checked[i % 16 + 1] = i * 0.25 end
end)
local array16_read = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + a16[i % 16 + 1] end
  sink = sink + s + 1
end)
local array16_write = median_time(function()
  for i = 1, N do a16[i % 16 + 1] = i * 0.25 end
end)
local empty_read16 = median_time(function()
  local s = 0.0
  for i = 1, N do s = s + floor[i % 16 + 1] end
  sink = sink + s
end)
local empty_write16 = median_time(function()
  for i = 1, N do floor[i % 16 + 1] = i * 0.25 end
end)
local from_table = median_time(function() dl.array(t):delete() end)
local to_table = median_time(function() local _ = a:totable() end)

print(string.format("dlbridge %s, %s, N = %d, median of %d rounds", dl.version, _VERSION, N, ROUNDS))
report("a[i] read (float64)", array_read, "t[i] read", table_read, 3)
report("a[i] = v write (float64)", array_write, "t[i] = v write", table_write, 3)
report("empty C __index (floor)", floor_read, "t[i] read", table_read, 3)
report("empty C __newindex (floor)", floor_write, "t[i] = v write", table_write, 3)
-- Issue 8's targets: reads <= 1.1x and writes <= 1.2x the empty metamethod.
report("a[i] read (float64)", array_read, "empty C __index", floor_read, 1.1)
report("a[i] = v write (float64)", array_write, "empty C __newindex", floor_write, 1.2)
report("a[i % 16 + 1] read", array16_read, "checked C __index", checked_read, 1.1)
report("a[i % 16 + 1] = v write", array16_write, "checked C __newindex", checked_write, 1.2)
report("checked C __index (floor)", checked_read, "empty C __index", empty_read16, 1.1)
report("checked C __newindex (floor)", checked_write, "empty C __newindex", empty_write16, 1.2)
report("dl.array(t)", from_table, "loop reading t", table_read, 2)
report("a:totable()", to_table, "loop reading t", table_read, 2)
assert(sink ~= 0)
