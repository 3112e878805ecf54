-- bench/support.lua: what the Lua benchmarks share. bench/run puts bench/ on
-- LUA_PATH (run by hand: LUA_PATH="bench/?.lua;lua/?.lua;lua/?/init.lua;;").
-- Runs on every Lua from 5.1 and LuaJIT (bench/ptr.lua, bench/memory.lua).
--
-- Comparisons with NumPy alternate case by case (support.comparison): the
-- benchmark's NumPy side (bench/*_numpy.py under Debian's /usr/bin/python3,
-- serving through bench/numpy_support.py) starts once, builds its data, and
-- waits for case names on its stdin. For each case both sides first make
-- untimed warm-up calls; then each round runs NumPy's side of that case
-- (one line "run NAME" out, one line "NAME seconds" back) and right after
-- it dlbridge's, both timed with CPU time (time.process_time, os.clock), so
-- that a machine that grows busier or quieter moves both sides alike. A row
-- prints each side's median and its spread (min-max over the rounds) and the
-- ratio of the medians; with BENCH_RATIOS set (bench/run does) every row is
-- also appended to that file, and bench/run prints them all at the end.
--
-- Environment: BENCH_ROUNDS (the rounds; each benchmark has its default),
-- BENCH_QUICK=1 (smaller sizes and one round: a smoke run), BENCH_NUMPY=0
-- (no NumPy side), BENCH_RATIOS (the file the rows go to).
local support = {}

local unpack = table.unpack or unpack

-- Whether this is a smoke run (BENCH_QUICK=1): benchmarks cut their sizes.
support.quick = (os.getenv("BENCH_QUICK") or "0") ~= "0"

-- The rounds: BENCH_ROUNDS, else 1 in a smoke run, else `default`.
function support.rounds(default)
  return tonumber(os.getenv("BENCH_ROUNDS")) or (support.quick and 1) or default
end

-- `full`, or `quick` in a smoke run.
function support.size(full, quick)
  if support.quick then return quick end
  return full
end

-- A count as labels print it: "1e7" for a power of ten, else its digits.
function support.count(n)
  for k = 1, 15 do
    if n == 10 ^ k then return "1e" .. k end
  end
  return string.format("%d", n)
end

local function sorted_copy(list)
  local s = {}
  for i = 1, #list do s[i] = list[i] end
  table.sort(s)
  return s
end

-- The median of a list of numbers (nil when empty).
function support.median(list)
  if #list == 0 then return nil end
  local s = sorted_copy(list)
  return s[math.floor((#s + 1) / 2)]
end

-- Median seconds (CPU time, os.clock) of `rounds` calls of f, each after
-- `before()` when given.
local function median_of(f, rounds, before)
  local times = {}
  for r = 1, rounds do
    if before then before() end
    local t0 = os.clock()
    f()
    times[r] = os.clock() - t0
  end
  return support.median(times)
end

local function full_collection() collectgarbage("collect") end

-- The median of `rounds` calls of f, each after a full collection.
function support.median_time(f, rounds) return median_of(f, rounds, full_collection) end

-- The same in steady state: one untimed call of f first, and no full
-- collection between rounds. For per-call figures: after a full collection
-- glibc trims the heap the collected garbage had grown, and the next round
-- page-faults it back in (some 10-20 ns a call over 1e5 calls of a small
-- operation), which a program that does not force collections never pays.
function support.median_time_warm(f, rounds)
  f()
  return median_of(f, rounds)
end

-- Medians of f and g (CPU time), alternated round by round (f, g, f, g,
-- ...) after a full collection each, so machine load moves both sides alike.
function support.paired_times(f, g, rounds)
  local tf, tg = {}, {}
  for r = 1, rounds do
    full_collection()
    local t0 = os.clock()
    f()
    tf[r] = os.clock() - t0
    full_collection()
    t0 = os.clock()
    g()
    tg[r] = os.clock() - t0
  end
  return support.median(tf), support.median(tg)
end

-- The folder of the running script (for its Python companion).
function support.here()
  return (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
end

local function quote(s) return "'" .. (tostring(s):gsub("'", "'\\''")) .. "'" end
support.quote = quote

local function succeeded(ok, _, code)
  if type(ok) == "number" then return ok == 0 end -- Lua 5.1, LuaJIT without 5.2 mode
  return ok == true and (code == nil or code == 0)
end

-- Single-threaded BLAS on both sides: unless OPENBLAS_NUM_THREADS is set,
-- runs this script again with OPENBLAS_NUM_THREADS=1 (before it loads
-- OpenBLAS, which reads it then; NumPy's side inherits it) and exits with
-- its status. Call it before the benchmark does anything.
function support.single_threaded_blas()
  if os.getenv("OPENBLAS_NUM_THREADS") then return end
  local ok, how, code = os.execute("OPENBLAS_NUM_THREADS=1 exec " .. quote(arg[-1] or "lua5.4")
                                   .. " " .. quote(arg[0]))
  os.exit(succeeded(ok, how, code) and 0 or 1)
end

local function status_bytes(key)
  local f = io.open("/proc/self/status", "r")
  local kb = f and f:read("*a"):match(key .. ":%s*(%d+)")
  if f then f:close() end
  return kb and tonumber(kb) * 1024
end

-- Peak RSS of this process (Linux's VmHWM) in bytes, or nil.
function support.peak_rss() return status_bytes("VmHWM") end

-- RSS of this process (Linux's VmRSS) in bytes, or nil.
function support.rss() return status_bytes("VmRSS") end

-- Resets this process's peak RSS to its current RSS (Linux: 5 > clear_refs).
function support.reset_peak_rss()
  local f = io.open("/proc/self/clear_refs", "w")
  if f then f:write("5") f:close() end
end

-- The BLAS libraries this process maps (Linux's /proc/self/maps), sorted.
function support.blas_libraries()
  local seen, list = {}, {}
  local f = io.open("/proc/self/maps", "r")
  if not f then return list end
  for line in f:lines() do
    local path = line:match("(/%S*blas%S*)$")
    if path and not seen[path] then
      seen[path] = true
      list[#list + 1] = path
    end
  end
  f:close()
  table.sort(list)
  return list
end

---------------------------------------------------------------------------
-- Comparisons with NumPy, alternated case by case.

local Comparison = {}
Comparison.__index = Comparison

-- A time in a unit: "ns", "us", "ms" or "s" (nil: picked from the time).
local SCALE = {ns = 1e9, us = 1e6, ms = 1e3, s = 1}
local function pick_unit(seconds)
  if seconds < 1e-6 then return "ns" elseif seconds < 1e-3 then return "us" end
  return "ms"
end

local function fmt(seconds, unit)
  local v = seconds * SCALE[unit]
  if v >= 1000 then return string.format("%.0f", v) elseif v >= 100 then
    return string.format("%.1f", v)
  elseif v >= 10 then return string.format("%.2f", v) end
  return string.format("%.3f", v)
end

-- "median unit (min-max)" of a list of seconds.
local function summary_text(list, unit)
  local s = sorted_copy(list)
  local m = support.median(s)
  return string.format("%8s %-2s (%s-%s)", fmt(m, unit), unit, fmt(s[1], unit), fmt(s[#s], unit))
end

-- Starts the NumPy side: /usr/bin/python3 bench/SCRIPT ARGS, its stdin a
-- named pipe this process writes, its stdout a pipe this process reads.
function Comparison:start(script, args)
  if os.getenv("BENCH_NUMPY") == "0" then return end
  local fifo = os.tmpname()
  os.remove(fifo)
  if not succeeded(os.execute("mkfifo -m 600 " .. quote(fifo))) then return end
  local words = {}
  for key, value in pairs(args or {}) do
    words[#words + 1] = quote(key .. "=" .. tostring(value))
  end
  table.sort(words)
  local python = os.getenv("BENCH_PYTHON") or "/usr/bin/python3"
  -- The shell opens the pipe before it runs python3: the two opens meet.
  local out = io.popen("exec " .. python .. " " .. quote(support.here() .. "/" .. script) .. " "
                       .. table.concat(words, " ") .. " < " .. quote(fifo), "r")
  local input = out and io.open(fifo, "w")
  os.remove(fifo)
  if not input then
    if out then out:close() end
    return
  end
  self.out, self.input = out, input
  local first = out:read("*l")
  if first ~= "ready" then -- no python3, no numpy, or the script failed (its stderr says why)
    self:stop()
    io.write("  (no NumPy side: " .. python .. " " .. script .. " did not start)\n")
  end
end

function Comparison:stop()
  if self.input then pcall(self.input.close, self.input) end
  if self.out then pcall(self.out.close, self.out) end
  self.input, self.out = nil, nil
end

-- Sends one command to the NumPy side and returns the rest of its answer
-- line "NAME rest" (nil when there is no NumPy side or no such case).
function Comparison:ask(command, name)
  if not self.input then return nil end
  self.input:write(command, " ", name, "\n")
  self.input:flush()
  local line = self.out:read("*l")
  if not line then
    self:stop()
    return nil
  end
  local rest = line:sub(#name + 2)
  if line:sub(1, #name + 1) ~= name .. " " or rest == "-" then return nil end
  if rest:match("^error") then
    io.write(string.format("  (NumPy side of %s: %s)\n", name, rest))
    return nil
  end
  return rest
end

-- A value the NumPy side computes (numpy_support.value): its text, or nil.
function Comparison:value(name) return self:ask("value", name) end

-- One round of dlbridge's side of case c: seconds a call.
local function our_round(c, f)
  if not c.steady then collectgarbage("collect") end
  local reps = c.reps or 1
  local t0
  if c.prepare then
    local x = c.prepare()
    t0 = os.clock()
    for _ = 1, reps do f(x) end
  else
    t0 = os.clock()
    for _ = 1, reps do f() end
  end
  return (os.clock() - t0) / (c.div or reps)
end

local function warm_up(c, f)
  for _ = 1, c.warmups or 1 do
    if c.prepare then f(c.prepare()) else f() end
  end
end

-- Measures case c on both sides, alternating round by round, and returns
-- its result. c: name (as the NumPy side's case), label, f (nil: dlbridge
-- lacks the operation) or make (returns f, called first; what it holds is
-- dropped after the case), prepare (called before each round, untimed: its
-- result is f's argument), reps (calls a round, default 1), div (what a
-- round's time is divided by, default reps: a loop inside f gives its own
-- count), steady (no full collection before a round), warmups (untimed
-- calls first, default 1), rounds, unit, target, note (a function of the
-- result giving text for the end of the row), floor (the dlbridge side is a
-- floor, what Lua itself costs for the same result: printed against NumPy,
-- kept out of the summary, which compares dlbridge).
function Comparison:measure(c)
  local r = {case = c, name = c.name, label = c.label or c.name, ours = {}, numpy = {},
             missing = c.f == nil and c.make == nil}
  local f = c.f
  if c.make then
    local ok, made = pcall(c.make)
    if ok then f = made else r.error = tostring(made) end
  end
  local theirs = self:ask("warm", c.name) ~= nil
  if f and not r.error then
    local ok, err = pcall(warm_up, c, f)
    if not ok then r.error = tostring(err) end
  end
  local ours = f ~= nil and not r.error
  for round = 1, c.rounds or self.rounds do
    if theirs then
      local t = tonumber(self:ask("run", c.name) or "")
      theirs = t ~= nil
      r.numpy[round] = t
    end
    if ours then
      local ok, t = pcall(our_round, c, f)
      if ok then r.ours[round] = t else r.error, ours = tostring(t), false end
    end
  end
  self:ask("done", c.name)
  f = nil
  collectgarbage("collect")
  r.ours_median, r.numpy_median = support.median(r.ours), support.median(r.numpy)
  if r.ours_median and r.numpy_median and r.numpy_median > 0 then
    r.ratio = r.ours_median / r.numpy_median
  end
  if not c.floor then self.results[#self.results + 1] = r end
  return r
end

-- Prints result r as one row.
function Comparison:print(r)
  local c = r.case
  local unit = c.unit or pick_unit(math.max(r.numpy_median or 0, r.ours_median or 0))
  local ours, theirs
  if r.error then
    ours = "error: " .. r.error:gsub("\n.*", ""):sub(1, 60)
  elseif r.missing then
    ours = "n/a (not implemented)"
  elseif r.ours_median then
    ours = summary_text(r.ours, unit)
  else
    ours = "-"
  end
  theirs = r.numpy_median and summary_text(r.numpy, unit) or "(no NumPy figure)"
  local ratio = r.ratio and string.format("%6.2fx", r.ratio) or "      -"
  local tail = ""
  if c.target then tail = string.format("  (target <= %gx)", c.target) end
  if c.note and r.ours_median then tail = tail .. "  " .. c.note(r) end
  io.write(string.format("%-" .. self.width .. "s %-27s  NumPy %-27s %s%s\n", r.label, ours,
                         theirs, ratio, tail))
  io.flush()
end

-- Records and prints a figure that is not a time (peak bytes an element,
-- say): label, ours, numpy (either nil when missing), unit (printed after
-- each), name (the NumPy side's, for the summary; default the label).
function Comparison:figure(fig)
  local r = {case = {}, name = fig.name or fig.label, label = fig.label, ours = {fig.ours},
             numpy = {fig.numpy}, ours_median = fig.ours, numpy_median = fig.numpy,
             unit = fig.unit}
  if fig.ours and fig.numpy and fig.numpy ~= 0 then r.ratio = fig.ours / fig.numpy end
  self.results[#self.results + 1] = r
  local function text(v) return v and string.format("%8.3g %s", v, fig.unit) or "-" end
  io.write(string.format("%-" .. self.width .. "s %-27s  NumPy %-27s %s%s\n", fig.label,
                         text(fig.ours), fig.numpy and text(fig.numpy) or "(no NumPy figure)",
                         r.ratio and string.format("%6.2fx", r.ratio) or "      -",
                         fig.note and ("  " .. fig.note) or ""))
  io.flush()
  return r
end

-- Measures case c (see measure) and prints its row; returns the result.
function Comparison:row(c)
  local r = self:measure(c)
  self:print(r)
  return r
end

-- The header line of the rows.
function Comparison:header(title)
  if title then io.write("-- ", title, "\n") end
  io.write(string.format("%-" .. self.width .. "s %-27s  %-33s %s\n", "case",
                         "dlbridge median (min-max)", "NumPy median (min-max)", " ratio"))
end

-- Ends the comparison: stops the NumPy side and appends the rows to the
-- file BENCH_RATIOS names, tab-separated: bench, label, ratio, our median,
-- min, max, NumPy's median, min, max (seconds; "-" where missing), status
-- ("error", "n/a" or empty), unit (empty: seconds), group (empty, or the
-- name under which the summary's table counts the row with others: the
-- astype pairs).
function Comparison:finish()
  if self.input then self:ask("quit", "-") end
  self:stop()
  local path = os.getenv("BENCH_RATIOS")
  if not path or path == "" then return end
  local f = io.open(path, "a")
  if not f then return end
  local function num(x) return x and string.format("%.6g", x) or "-" end
  for _, r in ipairs(self.results) do
    local so, sn = sorted_copy(r.ours), sorted_copy(r.numpy)
    local status = r.error and "error" or r.missing and "n/a" or ""
    f:write(table.concat({self.bench, (r.label:gsub("\t", " ")), num(r.ratio), num(r.ours_median),
                          num(so[1]), num(so[#so]), num(r.numpy_median), num(sn[1]),
                          num(sn[#sn]), status, r.unit or "", r.group or ""}, "\t"), "\n")
  end
  f:close()
end

-- Starts a comparison with NumPy: opts.script (beside the benchmark, serving
-- through numpy_support.serve), opts.args (a table: key=value arguments,
-- numpy_support.params reads them), opts.rounds, opts.bench (the name in
-- the summary, default the script's name), opts.width (of the label column).
function support.comparison(opts)
  local bench = opts.bench or (arg and arg[0] or "?"):match("([^/]*)%.lua$") or "?"
  local self = setmetatable({rounds = opts.rounds or support.rounds(5), results = {},
                             width = opts.width or 40, bench = bench}, Comparison)
  self:start(opts.script, opts.args)
  return self
end

---------------------------------------------------------------------------
-- The summary bench/run prints: every row of BENCH_RATIOS, then those whose
-- ratio is above 1.0 (dlbridge slower than NumPy).

function support.print_summary(path)
  local f = path and io.open(path, "r")
  if not f then
    print("(no ratios recorded)")
    return
  end
  local rows = {}
  for line in f:lines() do
    local fields = {}
    for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
    local bench, label, ratio, om, omin, omax, nm, nmin, nmax, status, unit, group =
      unpack(fields)
    rows[#rows + 1] = {bench = bench, label = label, ratio = tonumber(ratio), om = tonumber(om),
                       omin = tonumber(omin), omax = tonumber(omax), nm = tonumber(nm),
                       nmin = tonumber(nmin), nmax = tonumber(nmax), status = status or "",
                       unit = unit ~= "" and unit or nil, group = group ~= "" and group or nil}
  end
  f:close()
  local function value_text(r, m)
    if not m then return "-" end
    if r.unit then return string.format("%.3g %s", m, r.unit) end
    local unit = pick_unit(math.max(r.nm or 0, r.om or 0))
    return fmt(m, unit) .. " " .. unit
  end
  -- "clear": the two sides' ranges do not overlap.
  local function clear(r) return r.omin and r.nmax and (r.omin > r.nmax or r.omax < r.nmin) end
  local function line(r)
    local ratio = r.ratio and string.format("%6.2fx%s", r.ratio, clear(r) and "" or " ~") or
                  ("     - " .. (r.status ~= "" and r.status or "no NumPy figure"))
    return string.format("%-11s %-52s %12s %12s  %s", r.bench, r.label:sub(1, 52),
                         value_text(r, r.om), value_text(r, r.nm), ratio)
  end
  print(string.format("dlbridge / NumPy, ratio of the medians of CPU time (below 1: dlbridge "
                      .. "faster; ~: the two sides' ranges overlap)"))
  print(string.format("%-11s %-52s %12s %12s  %s", "bench", "case", "dlbridge", "NumPy", "ratio"))
  local above, groups = {}, {}
  for _, r in ipairs(rows) do
    if r.group then
      local key = r.bench .. "\t" .. r.group
      local g = groups[key]
      if not g then
        g = {bench = r.bench, name = r.group, ratios = {}, above = 0}
        groups[key], groups[#groups + 1] = g, g
      end
      if r.ratio then
        g.ratios[#g.ratios + 1] = r.ratio
        if r.ratio > 1.0 then g.above = g.above + 1 end
      end
    else
      print(line(r))
    end
    if r.ratio and r.ratio > 1.0 then above[#above + 1] = r end
  end
  for _, g in ipairs(groups) do
    local s = sorted_copy(g.ratios)
    print(string.format("%-11s %-52s %12s %12s  %6.2fx median (%.2f-%.2f), %d above 1.0",
                        g.bench, string.format("%s (%d ratios)", g.name, #s), "", "",
                        support.median(s) or 0, s[1] or 0, s[#s] or 0, g.above))
  end
  table.sort(above, function(a, b) return a.ratio > b.ratio end)
  local counted, grouped = 0, 0
  for _, r in ipairs(rows) do if r.ratio then counted = counted + 1 end end
  print(string.format("\nabove 1.0 (dlbridge slower than NumPy): %d of %d ratios, worst first%s",
                      #above, counted, #groups > 0 and "; of a group's rows, at most 10 whose "
                      .. "ranges are apart" or ""))
  local shown = {}
  for _, r in ipairs(above) do
    local key = r.group and (r.bench .. "\t" .. r.group)
    if not key or (clear(r) and (shown[key] or 0) < 10) then
      print(line(r))
      if key then shown[key] = (shown[key] or 0) + 1 end
    else
      grouped = grouped + 1
    end
  end
  if grouped > 0 then
    print(string.format("(and %d more in groups: their ranges overlap NumPy's, or past a "
                        .. "group's 10 worst)", grouped))
  end
  local failed = {}
  for _, r in ipairs(rows) do
    if r.status == "error" or r.status == "n/a" then failed[#failed + 1] = r end
  end
  if #failed > 0 then
    print(string.format("\nno dlbridge figure (error or not implemented): %d", #failed))
    for _, r in ipairs(failed) do print(line(r)) end
  end
end

return support
