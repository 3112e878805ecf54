-- bench/image.lua: issue 9's image example, a Lua scripter preparing a camera
-- frame for a model, in four tasks: RGBA8 (480x640x4 uint8) -> normalised
-- float32 CHW (drop alpha, /255, 3x480x640, contiguous); per-channel mean and
-- max; threshold -> mask (red > 0.5); count the mask. Each task is a function
-- task_* written as a user would, here with dlbridge and in
-- bench/image_numpy.py with NumPy (run under /usr/bin/python3 in the same run,
-- on the same bytes), alternated task by task (bench/support.lua). Prints
-- each task's time (the median of ROUNDS rounds of CPU time of REPS calls,
-- divided by REPS) with its spread, the ratio, the total, and the lines of
-- each task's body in both files (non-blank, comments excluded).
-- Targets: total <= 1.5x NumPy; each task as short as NumPy's.
-- Tasks dlbridge cannot run yet print "n/a (not implemented)".
-- BENCH_ROUNDS sets the rounds (default 5); BENCH_QUICK=1 makes 5 calls a round.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(5)
local REPS = support.size(50, 5)
local H, W = 480, 640

local function task_chw(img) -- RGBA8 HxWx4 -> float32 3xHxW in [0, 1], contiguous
  return img:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32") / 255
end

local function task_stats(chw) -- per-channel mean and max
  return chw:mean{dim = {2, 3}}, chw:max{dim = {2, 3}}
end

local function task_mask(chw) -- the pixels whose red channel is above 0.5
  return chw:select(1, 1):gt(0.5)
end

local function task_count(mask) -- how many they are
  return mask:count_nonzero()
end

-- Not a task (not counted): task_chw with its intermediate reused as the
-- result, as NumPy does (it divides a temporary with no other reference in
-- place), where dlbridge's intermediate otherwise waits for the GC.
local function chw_in_place(img)
  local x = img:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32")
  return dl.div(x, 255, {out = x})
end

-- The tasks in order: name, function, its argument's name, the methods it needs.
local TASKS = {
  {name = "chw", task = task_chw, arg = "img", needs = {}, label = "chw (RGBA8 -> CHW / 255)"},
  {name = "stats", task = task_stats, arg = "chw", needs = {"mean", "max"},
   label = "stats (mean, max by channel)"},
  {name = "mask", task = task_mask, arg = "chw", needs = {}, label = "mask (red > 0.5)"},
  {name = "count", task = task_count, arg = "mask", needs = {"count_nonzero"},
   label = "count (count_nonzero)"},
}

-- Lines of each task_* body in a source file: `open` matches a task's first
-- line (capturing its name), `close` its last, `comment` a comment line.
local function body_lines(path, open, close, comment)
  local counts, current = {}, nil
  local f = io.open(path, "r")
  if not f then return counts end
  for line in f:lines() do
    local name = line:match(open)
    if name then
      current, counts[name] = name, 0
    elseif current and line:match(close) then
      current = nil
    elseif current and line:match("%S") and not line:match(comment) then
      counts[current] = counts[current] + 1
    end
  end
  f:close()
  return counts
end

local here = support.here()
local lua_lines = body_lines(here .. "/image.lua", "^local function task_(%w+)%(", "^end",
                             "^%s*%-%-")
local numpy_lines = body_lines(here .. "/image_numpy.py", "^def task_(%w+)%(", "^%S",
                               "^%s*#")

local cmp = support.comparison{script = "image_numpy.py", rounds = ROUNDS, width = 40,
                               args = {REPS = REPS, H = H, W = W}}

-- The same bytes as NumPy's side: 256 times the fractional part of i * g.
local img = (dl.arange(H * W * 4, {dtype = "float64"}) * 0.7548776662466927 % 1.0 * 256)
    :astype("uint8"):view{H, W, 4}
local args = {img = img}
args.chw = task_chw(img)
args.mask = task_mask(args.chw)

-- Whether every method a task needs exists on its argument.
local function runnable(t)
  for _, m in ipairs(t.needs) do
    if args[t.arg][m] == nil then return false end
  end
  return true
end

print(string.format("dlbridge %s, %s, %dx%d RGBA8, median of %d rounds of %d calls (CPU time)",
                    dl.version, _VERSION, H, W, ROUNDS, REPS))
cmp:header()
local total, numpy_total, done, lines = 0, 0, 0, {}
for _, t in ipairs(TASKS) do
  local task, arg = t.task, args[t.arg]
  local r = cmp:row{name = t.name, label = t.label, reps = REPS, unit = "ms",
                    f = runnable(t) and function()
    local x = task(arg)
    if dl.is_array(x) then x:delete() end
  end}
  lines[#lines + 1] = string.format("%s %s / %s", t.name, lua_lines[t.name] or "?",
                                    numpy_lines[t.name] or "?")
  if r.ours_median then
    total, numpy_total, done = total + r.ours_median, numpy_total + (r.numpy_median or 0), done + 1
  end
end
local label = done == #TASKS and "total" or string.format("total (%d of %d tasks)", done, #TASKS)
print(string.format("%-40s %8.3f ms %24s %8.3f ms %17.2fx  (target <= 1.5x; the sum of the "
                    .. "medians)", label, total * 1e3, "NumPy", numpy_total * 1e3,
                    numpy_total > 0 and total / numpy_total or 0))
print("lines of each task's body (dlbridge / NumPy): " .. table.concat(lines, ", "))

-- chw with its intermediate reused, as NumPy reuses its temporary.
cmp:row{name = "chw", label = "chw, 2 lines, dl.div(x, 255, {out = x})", reps = REPS, unit = "ms",
        f = function() chw_in_place(img):delete() end}

local numpy_check = {}
for _, what in ipairs{"mean", "max", "count"} do numpy_check[what] = cmp:value("check_" .. what) end

-- The results, next to NumPy's (the same bytes: they should agree).
local function row(a)
  local out = {}
  for i = 1, #a do out[i] = string.format("%.9g", a[i]) end
  return table.concat(out, " ")
end
if runnable(TASKS[2]) then
  local mean, peak = task_stats(args.chw)
  print(string.format("mean   dlbridge %s   NumPy %s", row(mean), numpy_check.mean or "?"))
  print(string.format("max    dlbridge %s   NumPy %s", row(peak), numpy_check.max or "?"))
end
if runnable(TASKS[4]) then
  print(string.format("count  dlbridge %d   NumPy %s", task_count(args.mask),
                      numpy_check.count or "?"))
end
cmp:finish()
