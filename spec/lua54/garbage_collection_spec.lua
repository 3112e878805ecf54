-- Lua 5.4: arrays dropped without delete() are found by the generational
-- collector too (collectgarbage("generational")).
--
-- dlbridge paces Lua's collector by the bytes its arrays hold (see
-- spec/garbage_collection_spec.lua, which checks the incremental collector
-- every Lua has): in generational mode, too, dl.memory().in_use stays below
-- about twice the bytes of the arrays still reachable plus 64 MiB.
local dl = require "dlbridge"
local support = require "support"

local MiB = 1024 * 1024

local batch_loop = support.frame_batches

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
