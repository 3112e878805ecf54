-- Lua 5.4: arrays dropped without delete() are found by the generational
-- collector too (collectgarbage("generational")).
--
-- dlbridge paces Lua's collector by the bytes its arrays hold (see
-- spec/garbage_collection_spec.lua, which checks the incremental collector
-- every Lua has): in generational mode, too, dl.memory().in_use stays below
-- about twice the bytes of the arrays still reachable plus 64 MiB.
local dl = require "dlbridge"

local MiB = 1024 * 1024
local FRAME = 921600 * 4 -- a float32 640x480x3 frame: 3.5 MiB

-- Runs `iterations` rounds of 8 new frames, each round's batch kept for
-- `keep` rounds, beside `heap_mib` MiB of ordinary Lua strings; returns the
-- highest dl.memory().in_use seen and the most frame bytes reachable.
local function batch_loop(iterations, keep, heap_mib)
  local heap = {}
  for i = 1, heap_mib do heap[i] = string.rep("x", MiB - 64) .. i end
  local batches, peak = {}, 0
  for it = 1, iterations do
    local batch = {}
    batches[it % keep] = batch -- the batch of `keep` rounds ago becomes garbage
    for i = 1, 8 do batch[i] = dl.empty({921600}, {dtype = "float32"}) end
    peak = math.max(peak, dl.memory().in_use)
  end
  assert.equal(heap_mib, #heap)
  return peak, keep * 8 * FRAME
end

-- Runs f with the collector in `mode` (pause 200, step multiplier 100),
-- then puts the spec runner's settings back.
local function with_collector(mode, f)
  collectgarbage()
  local previous_mode = collectgarbage(mode)
  local previous_pause = collectgarbage("setpause", 200)
  local previous_stepmul = collectgarbage("setstepmul", 100)
  local ok, err = pcall(f)
  collectgarbage("setpause", previous_pause)
  collectgarbage("setstepmul", previous_stepmul)
  collectgarbage(previous_mode)
  collectgarbage()
  if not ok then error(err, 0) end
end

describe("arrays dropped without delete()", function()
  for _, mode in ipairs{"incremental", "generational"} do
    it("are collected in " .. mode .. " mode, beside a 10 MiB Lua heap", function()
      with_collector(mode, function()
        local peak, live = batch_loop(60, 1, 10)
        assert.is_true(peak <= 2 * live + 64 * MiB,
                       ("peak %.0f MiB for %.0f MiB live"):format(peak / MiB, live / MiB))
      end)
    end)

    it("are collected in " .. mode .. " mode when batches live for several rounds", function()
      with_collector(mode, function()
        local peak, live = batch_loop(40, 4, 1)
        assert.is_true(peak <= 2 * live + 64 * MiB,
                       ("peak %.0f MiB for %.0f MiB live"):format(peak / MiB, live / MiB))
      end)
    end)
  end
end)
