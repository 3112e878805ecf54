-- bench/elements.lua: element access and table conversion, as ratios to plain Lua tables.
-- Run: lua5.4 bench/elements.lua   (with LUA_PATH/LUA_CPATH set; bench/run does that)
-- Prints the median of several rounds, in ns per element, and the ratio to the
-- baseline, both sides alternated round by round (support.paired_times).
-- Targets (issue 2): a[i] read/write <= 3x a plain table; dl.array(t) and
-- a:totable() <= 2x a plain loop that reads t.
-- The "floor" rows time an empty C metamethod: no userdata __index can beat it.
local dl = require "dlbridge"

local support = require "support"

local N = tonumber(os.getenv("BENCH_N")) or support.size(1000000, 100000)
local ROUNDS = support.rounds(7)

local function report(name, measure, baseline_name, target)
  local seconds, baseline_seconds = measure()
  local ns = seconds / N * 1e9
  local base_ns = baseline_seconds / N * 1e9
  local ratio = seconds / baseline_seconds
  print(string.format("%-28s %7.2f ns/elem   %-26s %7.2f ns/elem   ratio %5.2fx  (target <= %gx)",
                      name, ns, baseline_name, base_ns, ratio, target))
end

local t = {}
for i = 1, N do t[i] = i * 0.5 end
local a = dl.array(t)
local a16 = dl.zeros{16}
local floor = require("bench_floor")() -- an empty C __index / __newindex
-- The checked floor: the least a safe C access does (identify the userdata,
-- check and convert key and value), over 16 elements (i % 16 + 1).
local checked = require("bench_floor").checked()
local sink = 0.0

-- Loops over N elements reading / writing x[i] (the 16 forms: x[i % 16 + 1]).
local function reads(x)
  return function()
    local s = 0.0
    for i = 1, N do s = s + x[i] end
    sink = sink + s
  end
end
local function writes(x)
  return function()
    for i = 1, N do x[i] = i * 0.25 end
  end
end
local function reads16(x)
  return function()
    local s = 0.0
    for i = 1, N do s = s + x[i % 16 + 1] end
    sink = sink + s + 1
  end
end
local function writes16(x)
  return function()
    for i = 1, N do x[i % 16 + 1] = i * 0.25 end
  end
end

print(string.format("dlbridge %s, %s, N = %d, median of %d rounds, sides alternated", dl.version,
                    _VERSION, N, ROUNDS))
local function compare(name, f, baseline_name, g, target)
  report(name, function() return support.paired_times(f, g, ROUNDS) end, baseline_name, target)
end
compare("a[i] read (float64)", reads(a), "t[i] read", reads(t), 3)
compare("a[i] = v write (float64)", writes(a), "t[i] = v write", writes(t), 3)
compare("empty C __index (floor)", reads(floor), "t[i] read", reads(t), 3)
compare("empty C __newindex (floor)", writes(floor), "t[i] = v write", writes(t), 3)
-- Issue 8's targets: reads <= 1.1x and writes <= 1.2x the empty metamethod.
compare("a[i] read (float64)", reads(a), "empty C __index", reads(floor), 1.1)
compare("a[i] = v write (float64)", writes(a), "empty C __newindex", writes(floor), 1.2)
compare("a[i % 16 + 1] read", reads16(a16), "checked C __index", reads16(checked), 1.1)
compare("a[i % 16 + 1] = v write", writes16(a16), "checked C __newindex", writes16(checked), 1.2)
compare("checked C __index (floor)", reads16(checked), "empty C __index", reads16(floor), 1.1)
compare("checked C __newindex (floor)", writes16(checked), "empty C __newindex", writes16(floor),
        1.2)
compare("dl.array(t)", function() dl.array(t):delete() end, "loop reading t", reads(t), 2)
compare("a:totable()", function() local _ = a:totable() end, "loop reading t", reads(t), 2)
assert(sink ~= 0)
