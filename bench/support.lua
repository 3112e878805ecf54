-- bench/support.lua: what the Lua benchmarks share. bench/run puts bench/ on
-- LUA_PATH (run by hand: LUA_PATH="bench/?.lua;lua/?.lua;lua/?/init.lua;;").
local support = {}

-- Median seconds (CPU time, os.clock) of `rounds` calls of f, each after
-- `before()` when given.
local function median_of(f, rounds, before)
  local times = {}
  for r = 1, rounds do
    if before then before() end
    local t0 = os.clock()
    f()
    times[r] = os.clock() - t0
  end
  table.sort(times)
  return times[math.floor((rounds + 1) / 2)]
end

local function full_collection() collectgarbage("collect") end

-- The median of `rounds` calls of f, each after a full collection.
function support.median_time(f, rounds) return median_of(f, rounds, full_collection) end

-- The same in steady state: one untimed call of f first, and no full
-- collection between rounds. For per-call figures: after a full collection
-- glibc trims the heap the collected garbage had grown, and the next round
-- page-faults it back in (some 10-20 ns a call over 1e5 calls of a small
-- operation), which a program that does not force collections never pays.
function support.median_time_warm(f, rounds)
  f()
  return median_of(f, rounds)
end

-- The folder of the running script (for its Python companion).
function support.here()
  return (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
end

-- NumPy's figures by name from the same run: runs script (beside the
-- benchmark) under Debian's /usr/bin/python3 with args, and reads its
-- "name seconds" lines. An empty table when NumPy is missing.
function support.numpy_figures(script, args)
  local figures = {}
  local py = io.popen("/usr/bin/python3 " .. support.here() .. "/" .. script .. " " ..
                      (args or "") .. " 2>/dev/null")
  if py then
    for line in py:lines() do
      local name, seconds = line:match("^(%S+) (%S+)$")
      if name then figures[name] = tonumber(seconds) end
    end
    py:close()
  end
  return figures
end

return support
