-- bench/support.lua: what the Lua benchmarks share. bench/run puts bench/ on
-- LUA_PATH (run by hand: LUA_PATH="bench/?.lua;lua/?.lua;lua/?/init.lua;;").
local support = {}

-- Median seconds (CPU time, os.clock) of `rounds` calls of f, each after a
-- full collection.
function support.median_time(f, rounds)
  local times = {}
  for r = 1, rounds do
    collectgarbage("collect")
    local t0 = os.clock()
    f()
    times[r] = os.clock() - t0
  end
  table.sort(times)
  return times[(rounds + 1) // 2]
end

-- The folder of the running script (for its Python companion).
function support.here()
  return (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
end

return support
