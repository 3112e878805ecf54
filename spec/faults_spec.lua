-- faults_spec.lua -- what a script sees when a backend fails, and what it can rely on.
--
-- A backend a host registers from C (dlb_register_backend) may fail any
-- call: an allocation runs out of memory, a copy hits a driver error. Then:
--
--   * the dlbridge call raises a dlbridge.Error with
--       err.code     "OUT_OF_MEMORY" or "BACKEND_FAILURE"
--       err.backend  the backend's name
--       err.status   the backend's own code (its last_status hook)
--   * nothing leaks: memory the failed call had already allocated is freed;
--   * the state stays usable: the next call works.
--
--   local ok, err = pcall(dl.zeros, {1024, 1024}, {device = "engine"})
--   if not ok and err.code == "OUT_OF_MEMORY" then ... free something, retry ... end
--
-- These specs prove it by brute force: a scripted workload touches every
-- kind of backend call; it runs once to count its calls (K), then once more
-- for each n in 1..K with the nth call made to fail.
--
-- In these specs the test module `testbackend` stands in for the engine a
-- host registers from C: tb.fail_at(name, n, code, status) makes its nth
-- call from now fail, and tb.stats(name).live counts its live allocations.
local dl = require "dlbridge"
local support = require "support"
local tb = require "testbackend"

local PLAIN = "engine_f1"        -- no device-side copy: everything staged through host
local FAST = "engine_f1_fast"    -- with copy_within
local EXPORT = "engine_f1_export" -- with the export hook (pinned host memory, DLPack type 3)
local STATUS = 700               -- the native code the failing call reports

local registered = support.registered

if not registered(PLAIN) then tb.register{name = PLAIN, devices = 2} end
if not registered(FAST) then tb.register{name = FAST, devices = 2, copy_within = true} end
if not registered(EXPORT) then
  tb.register{name = EXPORT, devices = 2, exportable = true, device_type = 3}
end

-- A script's day on the engine: every kind of operation, results in a table.
-- (workload("cpu") is the same on host memory, for comparison.)
local function workload(engine)
  local device = engine .. ":0"
  local second = engine == "cpu" and "cpu:0" or engine .. ":1"
  local zeros = dl.zeros({3, 4}, {device = device})
  local ones = dl.ones({3, 4}, {dtype = "float32", device = device})
  local m = dl.array({{1, 2, 3}, {4, 5, 6}}, {device = device})
  local text = tostring(m)
  local sum = m[2][3] + m:get(1, 1)
  m[1][2] = 20
  m:set(2, 1, 40)
  m[2] = {7, 8, 9}
  local as_float = m:astype("float32")
  local copy = m:copy()
  local transposed = m:transpose():copy()
  local on_cpu = dl.device_put(transposed, "cpu")
  local back = on_cpu:to(device)
  local other = back:to(second)
  local imported = dl.from_dlpack(back:to_dlpack{fallback = "cpu"})
  zeros:copy_from(ones)
  zeros[1] = {1, 2, 3, 4}
  copy:copy_from(m:slice(2, nil, nil, -1))
  ones:copy_from{{1, 2, 3, 4}}
  return {
    text = text, sum = sum, m = m:totable(), as_float = as_float:totable(),
    copy = copy:totable(), transposed = transposed:totable(), back = back:totable(),
    other = other:totable(), imported = imported:totable(), bytes = m:tobytes(),
    zeros = zeros:totable(), ones = ones:totable(),
  }
end

-- What the workload gives on cpu: the engine must give the same.
local function expected()
  return workload("cpu")
end

-- Live allocations of the engine once garbage is collected.
local function live(engine)
  collectgarbage()
  collectgarbage()
  return tb.stats(engine).live
end

-- The number of backend calls the workload makes on the engine.
local function count_calls(engine)
  local before = tb.stats(engine).calls
  workload(engine)
  return tb.stats(engine).calls - before
end

for _, engine in ipairs{PLAIN, FAST, EXPORT} do
  describe("a failing backend (" .. engine .. ")", function()
    after_each(function() tb.fail_at(engine, nil) end)

    it("the workload gives the same results as on cpu when nothing fails", function()
      local want = expected()
      want.text = want.text:gsub("cpu:0", engine .. ":0")
      assert.same(want, workload(engine))
    end)

    it("makes the same backend calls each run", function()
      local k = count_calls(engine)
      assert.is_true(k > 20, "calls: " .. k)
      assert.equal(k, count_calls(engine))
    end)

    it("raises the failing call's code, status and backend, at every call of the workload", function()
      local k = count_calls(engine)
      local base = live(engine)
      for n = 1, k do
        local code = n % 2 == 1 and "OUT_OF_MEMORY" or "BACKEND_FAILURE"
        tb.fail_at(engine, n, code, STATUS)
        local ok, err = pcall(workload, engine)
        tb.fail_at(engine, nil)
        local at = "call " .. n .. " of " .. k
        assert.is_false(ok, at .. ": the workload did not fail")
        assert.is_true(dl.is_error(err), at .. ": not a dlbridge.Error: " .. tostring(err))
        assert.equal(code, err.code, at)
        assert.equal(STATUS, err.status, at)
        assert.equal(engine, err.backend, at)
        assert.is_string(err.op, at)
        err = nil
        assert.equal(base, live(engine), at .. ": engine memory leaked")
      end
    end)

    it("leaves the state working after each failure", function()
      local k = count_calls(engine)
      for n = 1, k do
        tb.fail_at(engine, n, n % 2 == 1 and "OUT_OF_MEMORY" or "BACKEND_FAILURE", STATUS)
        pcall(workload, engine)
        tb.fail_at(engine, nil)
        -- a fresh small workload succeeds
        local ok, res = pcall(function()
          local a = dl.array({1, 2, 3}, {device = engine})
          a[2] = 20
          return a:to("cpu"):totable()
        end)
        assert.is_true(ok, "after a failure at call " .. n .. ": " .. tostring(res))
        assert.same({1, 20, 3}, res)
      end
    end)

    it("does not fail when the failure is set past the workload's last call", function()
      local k = count_calls(engine)
      local base = live(engine)
      local before = tb.stats(engine).calls
      tb.fail_at(engine, k + 1, "BACKEND_FAILURE", STATUS)
      local ok, res = pcall(workload, engine)
      assert.is_true(ok, tostring(res))
      assert.equal(k, tb.stats(engine).calls - before)
      res = nil
      assert.equal(base, live(engine))
    end)

    it("tb.fail_at(name, nil) clears a pending failure", function()
      tb.fail_at(engine, 1, "OUT_OF_MEMORY", STATUS)
      tb.fail_at(engine, nil)
      local ok, res = pcall(workload, engine)
      assert.is_true(ok, tostring(res))
    end)
  end)
end

describe("a single failed call, as a script meets it", function()
  it("an allocation that fails raises OUT_OF_MEMORY with the backend's status", function()
    tb.fail_at(PLAIN, 1, "OUT_OF_MEMORY", 2)
    local ok, err = pcall(dl.zeros, {4, 4}, {device = PLAIN})
    tb.fail_at(PLAIN, nil)
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.equal(PLAIN, err.backend)
    assert.equal(2, err.status)
    assert.equal("dl.zeros", err.op)
    assert.is_string(err.hint)
  end)

  it("a copy that fails raises BACKEND_FAILURE; the array keeps its old values", function()
    local a = dl.array({1, 2, 3}, {device = PLAIN})
    tb.fail_at(PLAIN, 1, "BACKEND_FAILURE", 700)
    local ok, err = pcall(function() a[2] = 20 end)
    tb.fail_at(PLAIN, nil)
    assert.is_false(ok)
    assert.equal("BACKEND_FAILURE", err.code)
    assert.equal(700, err.status)
    assert.matches("faults_spec%.lua:%d+: dlbridge: BACKEND_FAILURE: ", tostring(err))
    assert.same({1, 2, 3}, a:totable())
  end)

  it("a failed read while printing raises, and the next print works", function()
    local a = dl.array({1, 2, 3}, {device = PLAIN})
    tb.fail_at(PLAIN, 1, "BACKEND_FAILURE", 700)
    local ok, err = pcall(tostring, a)
    tb.fail_at(PLAIN, nil)
    assert.is_false(ok)
    assert.equal("BACKEND_FAILURE", err.code)
    assert.equal("array([1, 2, 3], shape=(3,), dtype=int64, device=" .. PLAIN .. ":0)",
                 tostring(a))
  end)

  it("a failed transfer with donate leaves the source alive", function()
    local a = dl.array({1, 2, 3}, {device = PLAIN})
    tb.fail_at(PLAIN, 1, "OUT_OF_MEMORY", 700)
    local ok, err = pcall(a.to, a, PLAIN .. ":1", {donate = true})
    tb.fail_at(PLAIN, nil)
    assert.is_false(ok)
    assert.equal("OUT_OF_MEMORY", err.code)
    assert.same({1, 2, 3}, a:totable())
  end)

  it("the recovery pattern: catch OUT_OF_MEMORY, free memory, retry", function()
    local cache = {dl.zeros(16, {device = PLAIN})}
    tb.fail_at(PLAIN, 1, "OUT_OF_MEMORY", 700)
    local a, err = dl.try(dl.ones, 16, {device = PLAIN})
    tb.fail_at(PLAIN, nil)
    if not a and err.code == "OUT_OF_MEMORY" then
      for _, x in ipairs(cache) do x:delete() end
      a = dl.ones(16, {device = PLAIN})
    end
    assert.is_not_nil(err)
    assert.equal(16, a.size)
    assert.equal(1, a[16])
  end)
end)
