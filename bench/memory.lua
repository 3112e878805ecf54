-- bench/memory.lua: garbage arrays found by the collector without manual
-- collection (issue 20). A loop makes 8 float32 arrays of 921,600 elements
-- (3.5 MiB each, a 640x480x3 frame) an iteration and keeps each batch for
-- KEEP iterations (KEEP = 1 drops each batch at the next iteration), beside a Lua heap of HEAP MiB of ordinary data (strings),
-- in Lua's incremental and generational modes. It prints the peak of
-- dl.memory().in_use against the live bytes (the batches a script still
-- holds): goal peak <= 2 x live + 64 MiB in every variant.
--
-- Then the batch preparation a user wrote (8 RGBA8 frames -> normalised
-- float32 CHW -> one stacked batch, results dropped, no delete()), timed
-- in both modes, with its peak in_use: the pile-up used to cost both memory
-- and time there (1.7 GB in use, 5-7x slower than the same code with <close>).
--
-- Each variant runs in a fresh process of the same interpreter (lua5.4 from
-- bench/run; any Lua from 5.1 or LuaJIT by hand, with LUA_CPATH at its
-- build: `LUA_CPATH="build-luajit/lib/?.so;;" luajit bench/memory.lua`), so
-- that one variant's heap and collector state do not leak into the next.
-- Modes the Lua lacks (generational before 5.4; 5.1 and LuaJIT name no
-- mode) are skipped. BENCH_MEMORY_ITERS sets the iterations (default 150;
-- 30 with BENCH_QUICK=1).
local QUICK = (os.getenv("BENCH_QUICK") or "0") ~= "0"
local ITERS = tonumber(os.getenv("BENCH_MEMORY_ITERS")) or (QUICK and 30 or 150)
local MiB = 1024 * 1024
local FRAME = 921600 * 4
local INTERPRETER = os.getenv("BENCH_LUA") or arg[-1] or "lua5.4"

-- Switches the collector to mode; false when this Lua has no such mode
-- (5.1 and LuaJIT: only their incremental collector, named by no option).
local function set_mode(mode)
  local ok = pcall(collectgarbage, mode)
  return ok or (mode == "incremental" and not pcall(collectgarbage, "generational"))
end

-- One variant, when run as `lua5.4 bench/memory.lua run MODE HEAP KEEP`.
local function run_variant(mode, heap_mib, keep)
  local dl = require "dlbridge"
  set_mode(mode)
  local hold = {}
  for i = 1, heap_mib do hold[i] = string.rep(string.char(i % 256), MiB) end
  local batches, peak, live_peak = {}, 0, 0
  local t0 = os.clock()
  for it = 1, ITERS do
    local t = {}
    batches[it % keep] = t -- the batch of KEEP iterations ago becomes garbage
    for i = 1, 8 do t[i] = dl.empty({921600}, {dtype = "float32"}) end
    local used = dl.memory().in_use
    if used > peak then peak = used end
    local live = math.min(it, keep) * 8 * FRAME
    if live > live_peak then live_peak = live end
  end
  local seconds = os.clock() - t0
  io.write(string.format("%.0f %.0f %.4f %d\n", peak / MiB, live_peak / MiB, seconds, #hold))
end

-- The batch loop, as `lua5.4 bench/memory.lua batch MODE`: seconds a batch, peak MiB.
local function run_batch(mode)
  local dl = require "dlbridge"
  set_mode(mode)
  local frames = {}
  for i = 1, 8 do
    frames[i] = dl.frombytes(string.rep(string.char(i * 17 % 256), 480 * 640 * 4), "uint8",
                             {480, 640, 4})
  end
  local batches, peak = 40, 0
  local t0 = os.clock()
  for _ = 1, batches do
    local chw = {}
    for i = 1, 8 do
      chw[i] = frames[i]:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32") / 255
    end
    local batch = dl.stack(chw)
    peak = math.max(peak, dl.memory().in_use)
    assert(batch.shape[1] == 8)
  end
  io.write(string.format("%.6f %.0f\n", (os.clock() - t0) / batches, peak / MiB))
end

if arg[1] == "run" then
  run_variant(arg[2], tonumber(arg[3]), tonumber(arg[4]))
  return
elseif arg[1] == "batch" then
  run_batch(arg[2])
  return
end

local script = arg[0]
print(_VERSION .. (rawget(_G, "jit") and (" (" .. jit.version .. ")") or "") .. ", " .. INTERPRETER)
local failed = 0
print(string.format("%-13s %5s %5s %10s %10s %8s %7s", "mode", "heap", "keep", "peak MiB",
                    "live MiB", "goal MiB", "s"))
local modes = {}
for _, mode in ipairs{"incremental", "generational"} do
  if set_mode(mode) then modes[#modes + 1] = mode end
end
set_mode("incremental")
for _, mode in ipairs(modes) do
  for _, heap in ipairs{1, 100} do
    for _, keep in ipairs{1, 4, 16} do
      local p = assert(io.popen(string.format("%s %s run %s %d %d", INTERPRETER, script, mode, heap, keep)))
      local line = p:read("*l")
      p:close()
      local peak, live, seconds = line:match("^(%S+) (%S+) (%S+)")
      peak, live, seconds = tonumber(peak), tonumber(live), tonumber(seconds)
      local goal = 2 * live + 64
      if peak > goal then failed = failed + 1 end
      print(string.format("%-13s %5d %5d %10.0f %10.0f %8.0f %7.3f %s", mode, heap, keep, peak,
                          live, goal, seconds, peak <= goal and "" or "OVER"))
    end
  end
end
print(string.format("variants over the goal: %d of %d", failed, #modes * 6))

print("\nbatch preparation: 8 frames 480x640 RGBA8 -> float32 CHW / 255 -> dl.stack, 40 batches")
for _, mode in ipairs(modes) do
  local p = assert(io.popen(string.format("%s %s batch %s", INTERPRETER, script, mode)))
  local seconds, peak = p:read("*l"):match("^(%S+) (%S+)")
  p:close()
  print(string.format("%-13s %8.2f ms a batch   peak in_use %5.0f MiB (live at most 66 MiB: frames, one CHW list, its stack)",
                      mode, tonumber(seconds) * 1e3, tonumber(peak)))
end
