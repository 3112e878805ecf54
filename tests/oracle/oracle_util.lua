-- oracle_util.lua -- what the oracle checkers share: the hex encoding of
-- element bytes and shapes in the case lines that cases.py and
-- compute_cases.py print (check.lua, compute_check.lua), and the run of a
-- checker of one *_cases.py script (util.checker: quantile, scatter, linalg,
-- vecmath).
local util = {}

-- The bytes of a hex string ("-" is none).
function util.unhex(h)
  if h == "-" then return "" end
  return (h:gsub("..", function(byte) return string.char(tonumber(byte, 16)) end))
end

-- A string's bytes as hex.
function util.hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- A shape written "2x3" (or "-" for 0-d) as a table of integers.
function util.parse_shape(text)
  local shape = {}
  if text ~= "-" then
    for n in text:gmatch("%d+") do shape[#shape + 1] = tonumber(n) end
  end
  return shape
end

-- An array viewed in one of the layouts the cases name: "T" (the last two
-- dims swapped), "rev1" (dim 1 reversed), "step1" (every other element of dim
-- 1); anything else as it is.
function util.apply_layout(a, layout)
  if layout == "T" then return a:transpose(a.ndim - 1, a.ndim) end
  if layout == "rev1" then return a:slice(1, nil, nil, -1) end
  if layout == "step1" then return a:slice(1, nil, nil, 2) end
  return a
end

-- A shape as NumPy prints it: "(2, 3)".
function util.shape_text(s)
  local t = {}
  for k = 1, #s do t[k] = tostring(s[k]) end
  return "(" .. table.concat(t, ", ") .. ")"
end

-- The run of a checker, from its command line (arg: [seed] [fraction]) and
-- environment: the seed (a new one each run, printed, unless given or
-- ORACLE_SEED), ORACLE_SEEDS=n seeds from it, the fraction of cases
-- (ORACLE_FRACTION), ORACLE_CASE=<id> for one case, ORACLE_TRACE=1 to name
-- each case on stderr, ORACLE_PYTHON. c.fail(id, what) and c.pass() count;
-- c.run(script, fields, check) runs script (beside the checker) for each
-- seed, hands each line of `fields` words to check(dir, word...), prints
-- "N passed, M failed" and exits non-zero on any failure.
function util.checker(arg)
  local c = {passed = 0, failed = 0}
  c.here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle"
  c.seed = tonumber(arg[1] or os.getenv("ORACLE_SEED") or
    tostring((os.time() * 7919 + math.floor(os.clock() * 1e6)) % 1000000))
  c.seeds = tonumber(os.getenv("ORACLE_SEEDS") or "1")
  c.fraction = arg[2] or os.getenv("ORACLE_FRACTION") or "1"
  c.only_case = os.getenv("ORACLE_CASE")
  c.trace = os.getenv("ORACLE_TRACE") == "1"
  c.python = os.getenv("ORACLE_PYTHON") or "/usr/bin/python3"

  function c.fail(id, what)
    c.failed = c.failed + 1
    print(string.format("FAIL %s: %s", id, what))
  end

  function c.pass() c.passed = c.passed + 1 end

  local function run_seed(script, fields, check, s)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local cases = assert(io.popen(string.format("env -u LD_PRELOAD %s %s/%s %d %s %s",
      c.python, c.here, script, s, dir, c.fraction)))
    local lines = {}
    for line in cases:lines() do lines[#lines + 1] = line end
    if not cases:close() then
      print(script .. " failed (is python3-numpy installed?)")
      os.exit(1)
    end
    for _, line in ipairs(lines) do
      local words = {}
      for w in line:gmatch("%S+") do words[#words + 1] = w end
      local id, op = words[1], words[2]
      if #words == fields and (not c.only_case or c.only_case == id) then
        if c.trace then io.stderr:write(id, " ", op, "\n") end
        local ok, err = pcall(check, dir, table.unpack(words, 1, fields))
        if not ok then c.fail(id, op .. ": the checker failed: " .. tostring(err)) end
      end
    end
    os.execute("rm -rf " .. dir)
    return #lines
  end

  function c.run(script, fields, check)
    local total = 0
    for k = 0, c.seeds - 1 do
      print("seed " .. (c.seed + k))
      total = total + run_seed(script, fields, check, c.seed + k)
    end
    print(string.format("%d passed, %d failed (%d cases, %d seeds)", c.passed, c.failed, total,
      c.seeds))
    os.exit(c.failed == 0 and 0 or 1)
  end

  return c
end

return util
