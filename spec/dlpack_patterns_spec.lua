-- dlpack_patterns_spec.lua -- two recipes for handing arrays to DLPack consumers.
--
-- A script that exports arrays meets two kinds of trouble: the array is
-- read-only (a:expand views) and the consumer wants to write, or insists on
-- zero copy where only a copy would do (a legacy 0.x tensor cannot say
-- "read-only", so a read-only array goes out as a copy); or the array is
-- somewhere the consumer cannot read. There are two ways to deal with it;
-- copy the one that fits.
--
-- (1) VALIDATE BEFORE EXPORT: look first, then pick the options.
--       local device_type, device_id = a:__dlpack_device()   -- 1, 0 is cpu
--       if a.readonly then ... copy = true ... end
--
-- (2) TRY, THEN RECOVER: export, and branch on the error code.
--       local ok, res = pcall(a.to_dlpack, a, opts)
--       if not ok and res.code == "COPY_REQUIRED" then ... allow a copy
--     or in the "nil, err" style:
--       local capsule, err = dl.try(a.to_dlpack, a, opts)
--
-- Every error names the failing call in err.op ("Array:to_dlpack",
-- "dl.from_dlpack") and says what to do next in err.hint.
local dl = require "dlbridge"
local support = require "support"

local CPU = 1  -- DLPack's device type for host memory (kDLCPU)

local readonly_array = support.readonly_array
local unpack = table.unpack or unpack -- Lua 5.1 and LuaJIT have only unpack

-- True when writing through b changes a (they share memory).
local function shares_memory(a, b)
  local old = a:get(1, 1)
  b:set(1, 1, old + 100)
  local shared = a:get(1, 1) == old + 100
  b:set(1, 1, old)
  return shared
end

describe("recipe 1: validate before export", function()
  -- A capsule for a consumer that reads legacy (DLPack 0.x) host tensors only.
  -- A legacy tensor cannot say "read-only": a read-only array goes as a copy
  -- (copy = nil does that by itself; saying it makes the copy visible here);
  -- an array that is not in host memory is copied there (dl_device = cpu).
  local function legacy_host_capsule(a)
    local opts = {max_version = {0, 8}}
    local device_type = a:__dlpack_device()
    if device_type ~= CPU then opts.dl_device = {CPU, 0} end
    if a.readonly then opts.copy = true end
    return a:to_dlpack(opts)
  end

  -- A capsule for a consumer that WRITES into the data: never hand it a
  -- read-only array's memory.
  local function writable_capsule(a)
    return a:to_dlpack{copy = a.readonly or nil}
  end

  it("a:__dlpack_device() and a.readonly tell what an export needs", function()
    local a = dl.zeros{2, 3}
    assert.equal(CPU, (a:__dlpack_device()))
    assert.is_false(a.readonly)
    assert.is_true(readonly_array().readonly)
  end)

  it("exports a writable host array as is: no copy", function()
    local a = dl.zeros{2, 3}
    local capsule = legacy_host_capsule(a)
    assert.is_false(capsule.versioned)
    assert.is_true(shares_memory(a, dl.from_dlpack(capsule)))
  end)

  it("exports a read-only array as a copy instead of failing", function()
    local a = readonly_array()
    local capsule = legacy_host_capsule(a)
    assert.is_false(capsule.versioned)
    local b = dl.from_dlpack(capsule)
    assert.same(a:totable(), b:totable())
    assert.is_false(b.readonly)
  end)

  it("gives a writing consumer its own copy of read-only data only", function()
    local ro = readonly_array()
    local b = dl.from_dlpack(writable_capsule(ro))
    assert.is_false(b.readonly)
    b:set(1, 1, 9)
    assert.equal(1, ro:get(1, 1))
    local rw = dl.zeros{2, 3}
    assert.is_true(shares_memory(rw, dl.from_dlpack(writable_capsule(rw))))
  end)

  it("otherwise, a versioned export keeps the read-only flag for the consumer", function()
    local capsule = readonly_array():to_dlpack()  -- max_version absent: versioned
    assert.is_true(capsule.versioned)
    assert.is_true(dl.from_dlpack(capsule).readonly)
  end)
end)

describe("recipe 2: try, then recover", function()
  -- A consumer that wants zero copy (copy = false) but can live with a copy:
  -- pcall style: on COPY_REQUIRED retry allowing one; other errors go on up.
  local function legacy_capsule(a)
    local opts = {max_version = {0, 8}, copy = false}
    local ok, res = pcall(a.to_dlpack, a, opts)
    if not ok and res.code == "COPY_REQUIRED" then
      opts.copy = nil
      return a:to_dlpack(opts)
    end
    if not ok then error(res, 0) end
    return res
  end

  -- dl.try style: nil, err instead of an error.
  local function legacy_capsule_try(a)
    local opts = {max_version = {0, 8}, copy = false}
    local capsule, err = dl.try(a.to_dlpack, a, opts)
    if not capsule and err:is("COPY_REQUIRED") then
      opts.copy = nil
      capsule, err = dl.try(a.to_dlpack, a, opts)
    end
    return capsule, err
  end

  it("pcall: a read-only array fails with COPY_REQUIRED, then exports as a copy", function()
    local a = readonly_array()
    local ok, err = pcall(a.to_dlpack, a, {max_version = {0, 8}, copy = false})
    assert.is_false(ok)
    assert.equal("COPY_REQUIRED", err.code)
    local b = dl.from_dlpack(legacy_capsule(a))
    assert.same({{1, 2, 3}, {1, 2, 3}}, b:totable())
    assert.is_false(b.readonly)
  end)

  it("pcall: a writable array exports on the first try, sharing memory", function()
    local a = dl.zeros{2, 2}
    assert.is_true(shares_memory(a, dl.from_dlpack(legacy_capsule(a))))
  end)

  it("pcall: other errors are raised again unchanged", function()
    local a = dl.zeros(3)
    a:delete()
    local ok, err = pcall(legacy_capsule, a)
    assert.is_false(ok)
    assert.equal("DELETED", err.code)
  end)

  it("dl.try: returns nil, err on failure, so the script can branch", function()
    local a = readonly_array()
    local capsule, err = dl.try(a.to_dlpack, a, {max_version = {0, 8}, copy = false})
    assert.is_nil(capsule)
    assert.equal("COPY_REQUIRED", err.code)
    capsule, err = legacy_capsule_try(a)
    assert.is_nil(err)
    assert.same(a:totable(), dl.from_dlpack(capsule):totable())
  end)

  it("dl.try: passes other errors back as nil, err as well", function()
    local a = dl.zeros(3)
    a:delete()
    local capsule, err = legacy_capsule_try(a)
    assert.is_nil(capsule)
    assert.equal("DELETED", err.code)
  end)

  it("dl.safe.from_dlpack: the consumer side in nil, err form", function()
    local capsule = dl.zeros(3):to_dlpack()
    assert.is_true(dl.is_array(dl.safe.from_dlpack(capsule)))
    local b, err = dl.safe.from_dlpack(capsule)  -- already consumed
    assert.is_nil(b)
    assert.equal("CAPSULE_CONSUMED", err.code)
  end)
end)

describe("DLPack errors", function()
  it("name the call in err.op: Array:to_dlpack", function()
    local a = readonly_array()
    local ok, err = pcall(a.to_dlpack, a, {max_version = {0, 8}, copy = false})
    assert.is_false(ok)
    assert.equal("Array:to_dlpack", err.op)
    ok, err = pcall(a.to_dlpack, a, {stream = 1})
    assert.is_false(ok)
    assert.equal("Array:to_dlpack", err.op)
  end)

  it("name the call in err.op: dl.from_dlpack", function()
    local capsule = dl.zeros(3):to_dlpack()
    dl.from_dlpack(capsule)
    local ok, err = pcall(dl.from_dlpack, capsule)
    assert.is_false(ok)
    assert.equal("dl.from_dlpack", err.op)
    ok, err = pcall(dl.from_dlpack, 42)
    assert.is_false(ok)
    assert.equal("dl.from_dlpack", err.op)
  end)

  it("carry a non-empty hint", function()
    local a = readonly_array()
    local consumed = dl.zeros(1):to_dlpack()
    dl.from_dlpack(consumed)
    local failures = {
      {a.to_dlpack, a, {max_version = {0, 8}, copy = false}},  -- COPY_REQUIRED
      {a.to_dlpack, a, {dl_device = {2, 0}}},            -- UNSUPPORTED
      {a.to_dlpack, a, {dl_device = {2, 0}, copy = false}},  -- COPY_REQUIRED
      {a.to_dlpack, a, {stream = 1}},                    -- ARGUMENT
      {dl.from_dlpack, consumed},                        -- CAPSULE_CONSUMED
      {dl.from_dlpack, dl.zeros(1):to_dlpack(), {device = "nosuch"}},  -- UNKNOWN_DEVICE
    }
    for i, call in ipairs(failures) do
      local ok, err = pcall(unpack(call))
      assert.is_false(ok)
      assert.equal("string", type(err.hint), "failure " .. i)
      assert.is_true(#err.hint > 0, "failure " .. i)
    end
  end)

  it("COPY_REQUIRED's hint points at the fixes (allow a copy, or a versioned capsule)", function()
    local a = readonly_array()
    local ok, err = pcall(a.to_dlpack, a, {max_version = {0, 8}, copy = false})
    assert.is_false(ok)
    assert.truthy(err.hint:find("copy = nil or true", 1, true), err.hint)
    assert.truthy(err.hint:find("max_version = {1, 0}", 1, true), err.hint)
    assert.truthy(tostring(err):find("dlbridge: COPY_REQUIRED: ", 1, true))
  end)
end)
