-- tests/oracle/blocks_check.lua: runs the cases tests/oracle/blocks_cases.py
-- writes (NumPy 1.24's float sums, means, std and var over short reduced dims
-- beside kept ones, a 2x2 block mean's shape) and compares the results bit
-- for bit. Prints each mismatch, then "N passed, M failed"; exits non-zero on
-- any failure.
--
--   lua5.4 tests/oracle/blocks_check.lua [seed] [fraction]
--
-- ORACLE_SEED, ORACLE_SEEDS, ORACLE_CASE, ORACLE_TRACE as oracle_util.lua says.
local dl = require "dlbridge"

local util = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle") ..
  "/oracle_util.lua")
local checker = util.checker(arg)

checker.run("blocks_cases.py", 7, function(_, id, op, dtype, shape, dims, x, want)
  local s, d = util.parse_shape(shape), {}
  for v in dims:gmatch("%d+") do d[#d + 1] = tonumber(v) end
  local r = dl[op](dl.frombytes(util.unhex(x), dtype, s), {dim = d})
  if util.hex(r:tobytes()) ~= want then
    return checker.fail(id, string.format("%s %s of %s over {%s}: not NumPy's bits", op, dtype,
      shape, dims))
  end
  checker.pass()
end)
