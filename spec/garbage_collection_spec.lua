-- garbage_collection_spec.lua -- arrays a script drops are found without
-- calling collectgarbage() by hand.
--
-- Array buffers live outside the Lua heap, where Lua's own collector does
-- not look. dlbridge therefore drives the collector by the bytes it holds
-- (every backend, DLPack imports included): before it makes a new array it
-- compares dl.memory().in_use with a threshold and, once it is reached, runs
-- one full collection; the next threshold is one and a half times what is
-- in use after it, plus 32 MiB. Between collections the growth also counts
-- as collector debt, so an incremental collector keeps up on its own.
--
-- What a script can rely on: however large the Lua heap, in incremental and
-- generational mode and whatever setpause/setstepmul the host chose,
-- dl.memory().in_use stays below about twice the bytes of the arrays still
-- reachable plus 64 MiB. A script that stops the collector
-- (collectgarbage "stop") is obeyed: nothing is collected until it restarts.
-- a:delete(), dl.scope and `local a <close>` free at once and never need a
-- collection. The incremental collector is every Lua's (the default of
-- Lua 5.4 too); Lua 5.4's generational mode: spec/lua54/garbage_collection_spec.lua.
local dl = require "dlbridge"
local support = require "support"

local MiB = 1024 * 1024
local FRAME = 921600 * 4 -- a float32 640x480x3 frame: 3.5 MiB

local batch_loop = support.frame_batches

-- Runs f with the incremental collector's pause and step multiplier set as
-- given, then puts the spec runner's settings back.
local function with_collector(pause, stepmul, f)
  collectgarbage()
  local previous_pause = collectgarbage("setpause", pause or 200)
  local previous_stepmul = collectgarbage("setstepmul", stepmul or 100)
  local ok, err = pcall(f)
  collectgarbage("setpause", previous_pause)
  collectgarbage("setstepmul", previous_stepmul)
  collectgarbage()
  if not ok then error(err, 0) end
end

describe("arrays dropped without delete()", function()
  it("are collected in incremental mode, beside a 10 MiB Lua heap", function()
    with_collector(nil, nil, function()
      local peak, live = batch_loop(60, 1, 10)
      assert.is_true(peak <= 2 * live + 64 * MiB,
                     ("peak %.0f MiB for %.0f MiB live"):format(peak / MiB, live / MiB))
    end)
  end)

  it("are collected in incremental mode when batches live for several rounds", function()
    with_collector(nil, nil, function()
      local peak, live = batch_loop(40, 4, 1)
      assert.is_true(peak <= 2 * live + 64 * MiB,
                     ("peak %.0f MiB for %.0f MiB live"):format(peak / MiB, live / MiB))
    end)
  end)

  it("are collected when the host made the collector lazy (setpause 1000)", function()
    with_collector(1000, 400, function()
      local peak, live = batch_loop(60, 1, 20)
      assert.is_true(peak <= 2 * live + 64 * MiB,
                     ("peak %.0f MiB for %.0f MiB live"):format(peak / MiB, live / MiB))
    end)
  end)

  -- (Lua 5.1 cannot say that its collector is stopped: there dlbridge paces
  -- it anyway, and the garbage goes; LuaJIT and 5.2+ can.)
  local can_tell_stopped = _VERSION ~= "Lua 5.1" or rawget(_G, "jit") ~= nil
  it("stay until a stopped collector is restarted", function()
    collectgarbage()
    local before = dl.memory().in_use
    collectgarbage("stop")
    local ok, err = pcall(function()
      for _ = 1, 40 do dl.empty({921600}, {dtype = "float32"}) end -- 140 MiB, all garbage
    end)
    local held = dl.memory().in_use
    collectgarbage("restart")
    assert(ok, err)
    if can_tell_stopped then
      assert.is_true(held >= before + 40 * FRAME) -- nothing was collected while stopped
      dl.empty{1}                                 -- the next array paces the collector again
      assert.is_true(dl.memory().in_use < held - 64 * MiB)
    else
      assert.is_true(held < before + 40 * FRAME) -- 5.1: collected all the same
    end
  end)
end)
