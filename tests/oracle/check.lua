-- tests/oracle/check.lua: runs the cases tests/oracle/cases.py prints (NumPy as
-- the oracle) through dlbridge and compares the bytes. Prints each mismatch, then
-- "N passed, M failed"; exits non-zero on any failure.
--
--   lua5.4 tests/oracle/check.lua [seed] [cases per dtype pair]
--
-- The seed defaults to a new one each run (printed, so a failure can be rerun
-- with it); ORACLE_SEED fixes it.
local dl = require "dlbridge"

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "tests/oracle"
package.path = here .. "/?.lua;" .. package.path
local util = require "oracle_util"
local unhex, hex, parse_shape = util.unhex, util.hex, util.parse_shape
local seed = arg[1] or os.getenv("ORACLE_SEED") or tostring(os.time() % 100000)
local per_pair = arg[2] or "6"

-- The same layout operations as cases.py's apply_layout, in dlbridge's words.
local function apply_layout(a, layout)
  if layout == "-" then return a end
  for op in layout:gmatch("[^+]+") do
    if op == "T" then
      a = a:transpose()
    elseif op:match("^step") then
      local d, k = op:match("^step(%d+)%.(%d+)$")
      d, k = tonumber(d), tonumber(k)
      if a.shape[d] > 0 then a = a:slice(d, 1, -1, k) end
    elseif op:match("^rev") then
      local d = tonumber(op:match("^rev(%d+)$"))
      if a.shape[d] > 0 then a = a:slice(d, -1, 1, -1) end
    elseif op:match("^bcast") then
      local n = tonumber(op:match("^bcast(%d+)$"))
      a = a:unsqueeze(1):expand{n, table.unpack(a.shape)}
    else
      error("unknown layout op " .. op)
    end
  end
  return a
end

local function base(dtype, shape_text, h)
  return dl.frombytes(unhex(h), dtype, parse_shape(shape_text))
end

local run = {}

function run.astype(src, dst, shape, src_layout, _, src_hex)
  local view = apply_layout(base(src, shape, src_hex), src_layout)
  return view:astype(dst):tobytes()
end

function run.copy_from(src, dst, shapes, src_layout, dst_layout, src_hex, dst_hex)
  local sshape, dshape = shapes:match("^(.-)/(.*)$")
  local sview = apply_layout(base(src, sshape, src_hex), src_layout)
  local dbase = base(dst, dshape, dst_hex)
  apply_layout(dbase, dst_layout):copy_from(sview)
  return dbase:tobytes()
end

function run.copy_from_self(dtype, _, shape, src_layout, _, base_hex)
  local a = base(dtype, shape, base_hex)
  a:copy_from(apply_layout(a, src_layout))
  return a:tobytes()
end

-- NumPy runs without the sanitizer runtime the ASan build preloads into lua5.4.
local cmd = string.format("env -u LD_PRELOAD /usr/bin/python3 %s/cases.py %s %s", here, seed, per_pair)
local cases = assert(io.popen(cmd))
local passed, failed = 0, 0
for line in cases:lines() do
  local f = {}
  for field in line:gmatch("%S+") do f[#f + 1] = field end
  local op, want = f[1], unhex(f[9])
  local ok, got = pcall(run[op], f[2], f[3], f[4], f[5], f[6], f[7], f[8])
  if ok and got == want then
    passed = passed + 1
  else
    failed = failed + 1
    if failed <= 40 then
      print(string.format("FAIL %s\n  got  %s", line, ok and hex(got) or tostring(got)))
    end
  end
end
assert(cases:close(), "cases.py failed (is python3-numpy installed?)")
print(string.format("oracle seed %s", seed))
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and passed > 0 and 0 or 1)
