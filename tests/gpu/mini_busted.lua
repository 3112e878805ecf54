-- mini_busted.lua -- a small runner for busted specs where busted is not
-- installed (tests/gpu/run on a GPU machine that has Python but no Lua).
--
--   local mb = require "mini_busted"
--   local r = mb.run{files = {"spec/cuda_spec.lua"}, exclude_tags = {"standin"}}
--   -- r.successes, r.failures, r.errors, r.pendings, r.skipped (counts), r.log
--
-- It implements the part of busted's API the specs use, with busted's
-- semantics: describe/context/insulate/expose, it/spec/test, pending,
-- before_each/after_each (outer blocks' hooks first, after_each in reverse),
-- setup/teardown/lazy_setup/lazy_teardown/strict_setup/strict_teardown (once
-- per block that runs a test), finally (inside an it), tags (#word in a
-- name) with include/exclude lists, and luassert's assert: callable, with
-- the modifiers is/are/was/has/does and not/no, and the assertions equal(s),
-- same, true, false, truthy, falsy, nil, near, matches, error/errors
-- (has_error), error_matches, unique, and the type checks (string, number,
-- table, function, boolean, userdata). `require "luassert"` returns this
-- assert. All files run in one Lua state, as busted does.
local M = {}

-- ---- assertions ---------------------------------------------------------

-- A failed assertion is raised as this table so that the runner can tell a
-- failure from an error.
local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.message end

local function fail(message, level)
  error(setmetatable({message = message, traceback = debug.traceback("", (level or 1) + 2)},
                     Failure), 0)
end

local function show(v, depth)
  depth = depth or 0
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" or getmetatable(v) then return tostring(v) end
  if depth > 3 then return "{...}" end
  local parts, n = {}, 0
  for k, x in pairs(v) do
    n = n + 1
    if n > 16 then parts[#parts + 1] = "..." break end
    parts[#parts + 1] = "[" .. show(k, depth + 1) .. "] = " .. show(x, depth + 1)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function deep_same(a, b, seen)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then
    return type(a) == "number" and type(b) == "number" and a ~= a and b ~= b -- NaN, as busted
  end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do
    if not deep_same(v, b[k], seen) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

-- Each assertion: f(args) -> ok, description; nargs: how many arguments it
-- takes (the next one, if a string, is the user's message).
local checks = {}
local function def(names, nargs, f)
  for name in names:gmatch("%S+") do checks[name] = {nargs = nargs, f = f} end
end

def("equal equals", 2, function(a)
  return a[1] == a[2], "expected " .. show(a[1]) .. ", got " .. show(a[2])
end)
def("same", 2, function(a)
  return deep_same(a[1], a[2]), "expected the same as " .. show(a[1]) .. ", got " .. show(a[2])
end)
def("true", 1, function(a) return a[1] == true, "expected true, got " .. show(a[1]) end)
def("false", 1, function(a) return a[1] == false, "expected false, got " .. show(a[1]) end)
def("truthy", 1, function(a)
  return a[1] ~= nil and a[1] ~= false, "expected a truthy value, got " .. show(a[1])
end)
def("falsy", 1, function(a)
  return a[1] == nil or a[1] == false, "expected a falsy value, got " .. show(a[1])
end)
def("nil", 1, function(a) return a[1] == nil, "expected nil, got " .. show(a[1]) end)
def("near", 3, function(a)
  local ok = type(a[1]) == "number" and type(a[2]) == "number" and type(a[3]) == "number"
             and math.abs(a[1] - a[2]) <= a[3]
  return ok, "expected " .. show(a[2]) .. " within " .. show(a[3]) .. " of " .. show(a[1])
end)
def("matches match", 2, function(a)
  local pattern, s, init, plain = a[1], a[2], a[3], a[4]
  if type(init) ~= "number" then init, plain = nil, nil end
  local ok = type(s) == "string" or type(s) == "number"
  ok = ok and string.find(tostring(s), pattern, init, plain) ~= nil
  return ok, "expected " .. show(s) .. " to match " .. show(pattern)
end)
def("unique", 1, function(a)
  local t = a[1]
  for i = 1, #t do
    for j = i + 1, #t do
      if deep_same(t[i], t[j]) then return false, "expected unique values, " .. show(t[i]) .. " twice" end
    end
  end
  return true, "expected values that are not unique"
end)
for _, ty in ipairs{"string", "number", "table", "function", "boolean", "userdata", "thread"} do
  def(ty, 1, function(a) return type(a[1]) == ty, "expected a " .. ty .. ", got " .. show(a[1]) end)
end

-- error(fn, expected): fn raises; with expected, the error equals it (a
-- string error is compared without its position prefix, as luassert does).
local function error_value(fn)
  local ok, err = pcall(fn)
  return ok, err
end
def("error errors", 2, function(a)
  if type(a[1]) ~= "function" then return false, "expected a function, got " .. show(a[1]) end
  local ok, err = error_value(a[1])
  if ok then return false, "expected an error" end
  if a[2] == nil then return true, "expected no error, got " .. show(err) end
  local same = deep_same(a[2], err)
  if not same and type(err) == "string" and type(a[2]) == "string" then
    same = err:gsub("^.-:%d+: ", "", 1) == a[2]
  end
  return same, "expected the error " .. show(a[2]) .. ", got " .. show(err)
end)
def("error_matches error_match", 4, function(a)
  if type(a[1]) ~= "function" then return false, "expected a function, got " .. show(a[1]) end
  local ok, err = error_value(a[1])
  if ok then return false, "expected an error matching " .. show(a[2]) end
  local init, plain = a[3], a[4]
  if type(init) ~= "number" then init, plain = nil, nil end
  local text = type(err) == "string" and err or tostring(err)
  return string.find(text, a[2], init, plain) ~= nil,
         "expected an error matching " .. show(a[2]) .. ", got " .. show(err)
end)

local modifiers = {is = false, are = false, was = false, has = false, does = false,
                   ["not"] = true, no = true}

-- assert.a.b_c(...): the words of the chain (split at dots and underscores)
-- minus the modifiers name the check; each not/no flips it.
local function chain(words)
  return setmetatable({}, {
    __index = function(_, key)
      local w = {table.unpack(words)}
      for part in key:gmatch("[^_]+") do w[#w + 1] = part end
      return chain(w)
    end,
    __call = function(_, ...)
      local negate, rest = false, {}
      for _, word in ipairs(words) do
        if modifiers[word] ~= nil and #rest == 0 then
          negate = negate ~= modifiers[word]
        else
          rest[#rest + 1] = word
        end
      end
      local name = table.concat(rest, "_")
      local check = checks[name]
      if not check then error("mini_busted: unknown assertion '" .. table.concat(words, ".") .. "'", 2) end
      local args = table.pack(...)
      local ok, why = check.f(args)
      if ok == negate then
        local message = args[check.nargs + 1]
        if type(message) ~= "string" then
          -- a check with optional trailing arguments: the last string is the message
          message = type(args[args.n]) == "string" and args.n > check.nargs and args[args.n] or nil
        end
        fail((message and message .. "\n" or "") .. (negate and "(negated) " or "") .. why, 2)
      end
      return ...
    end,
  })
end

M.assert = setmetatable({}, {
  __index = function(_, key) return chain({})[key] end,
  __call = function(_, v, message, ...)
    if not v then fail(message ~= nil and tostring(message) or "assertion failed!", 1) end
    return v, message, ...
  end,
})

-- ---- the tree of blocks ---------------------------------------------------

local function new_block(name, parent)
  return {name = name, parent = parent, children = {}, before = {}, after = {},
          setup = {}, teardown = {}}
end

local current -- the block whose body is running (while collecting)
local finalizers -- finally() callbacks of the running test

local function full_name(block, name)
  local parts = {name}
  while block and block.parent do
    table.insert(parts, 1, block.name)
    block = block.parent
  end
  return table.concat(parts, " ")
end

local function add(kind, name, fn)
  if not current then error("mini_busted: " .. kind .. " outside a spec file", 3) end
  local node = {kind = kind, name = name, fn = fn, block = current}
  current.children[#current.children + 1] = node
  return node
end

local function describe(name, fn)
  local block = new_block(name, current)
  add("block", name, nil).block_node = block
  local outer = current
  current = block
  local ok, err = xpcall(fn, debug.traceback)
  current = outer
  if not ok then add("broken", name, nil).err = err end
end

local function hook(field)
  return function(fn) table.insert(current[field], fn) end
end

local api = {
  describe = describe, context = describe, insulate = describe, expose = describe,
  it = function(name, fn)
    if fn == nil then add("pending", name) else add("test", name, fn) end
  end,
  pending = function(name) add("pending", name) end,
  before_each = hook("before"), after_each = hook("after"),
  setup = hook("setup"), lazy_setup = hook("setup"), strict_setup = hook("setup"),
  teardown = hook("teardown"), lazy_teardown = hook("teardown"), strict_teardown = hook("teardown"),
  finally = function(fn)
    if not finalizers then error("mini_busted: finally outside an it", 2) end
    finalizers[#finalizers + 1] = fn
  end,
}
api.spec, api.test = api.it, api.it

-- ---- running ---------------------------------------------------------------

local function tags_of(text)
  local tags = {}
  for tag in text:gmatch("#([%w_%-]+)") do tags[tag] = true end
  return tags
end

local function wanted(text, opts)
  local tags = tags_of(text)
  for _, t in ipairs(opts.exclude_tags or {}) do
    if tags[t] then return false end
  end
  if opts.tags and #opts.tags > 0 then
    for _, t in ipairs(opts.tags) do
      if tags[t] then return true end
    end
    return false
  end
  return true
end

local function message_of(err)
  if getmetatable(err) == Failure then return err.message .. err.traceback end
  if type(err) == "table" then
    local ok, s = pcall(tostring, err)
    if ok then return s end
  end
  return tostring(err)
end

local function chain_of(block)
  local blocks = {}
  while block do
    table.insert(blocks, 1, block)
    block = block.parent
  end
  return blocks
end

local function run_hooks(list, reverse)
  local from, to, step = 1, #list, 1
  if reverse then from, to, step = #list, 1, -1 end
  for i = from, to, step do
    local ok, err = xpcall(list[i], debug.traceback)
    if not ok then return false, err end
  end
  return true
end

local function run_test(node, r, opts)
  local name = full_name(node.block, node.name)
  local blocks = chain_of(node.block)
  local ok, err = true, nil
  for _, b in ipairs(blocks) do
    if ok then ok, err = run_hooks(b.before) end
  end
  finalizers = {}
  if ok and opts.started then opts.started(name) end
  if ok then
    ok, err = xpcall(node.fn, function(e)
      if type(e) == "table" then return e end -- a Failure, a dlbridge.Error: kept as is
      return debug.traceback(tostring(e), 2)
    end)
  end
  local cleanup = finalizers
  finalizers = nil
  for i = #cleanup, 1, -1 do
    local fok, ferr = xpcall(cleanup[i], debug.traceback)
    if ok and not fok then ok, err = false, ferr end
  end
  for i = #blocks, 1, -1 do
    local hok, herr = run_hooks(blocks[i].after, true)
    if ok and not hok then ok, err = false, herr end
  end
  local why = not ok and opts.not_applicable and opts.not_applicable(err, name)
  if ok then
    r.successes = r.successes + 1
    r.say("ok      " .. name)
  elseif why then
    r.skipped = r.skipped + 1
    r.say("n/a     " .. name .. " (" .. why .. ")")
  elseif getmetatable(err) == Failure then
    r.failures = r.failures + 1
    r.say("FAIL    " .. name .. "\n" .. message_of(err))
  else
    r.errors = r.errors + 1
    r.say("ERROR   " .. name .. "\n" .. message_of(err))
  end
end

-- Whether the block (or a nested one) has a test these options run.
local function runs_any(block, opts, prefix)
  for _, node in ipairs(block.children) do
    local text = prefix .. " " .. node.name
    if node.kind == "test" and wanted(text, opts) then return true end
    if node.kind == "block" and runs_any(node.block_node, opts, text) then return true end
  end
  return false
end

-- A block with no test to run still reports what it holds: its pending
-- tests (busted lists them too) and broken describes, nested ones included.
local function report_idle(block, opts, r, prefix)
  for _, node in ipairs(block.children) do
    local text = prefix .. " " .. node.name
    if node.kind == "broken" then
      r.errors = r.errors + 1
      r.say("ERROR   " .. full_name(block, node.name) .. " (in describe)\n" .. node.err)
    elseif node.kind == "pending" and wanted(text, opts) then
      r.pendings = r.pendings + 1
      r.say("pending " .. full_name(block, node.name))
    elseif node.kind == "block" then
      report_idle(node.block_node, opts, r, text)
    end
  end
end

local function run_block(block, opts, r, prefix)
  if not runs_any(block, opts, prefix) then
    report_idle(block, opts, r, prefix)
    return
  end
  local ok, err = run_hooks(block.setup)
  for _, node in ipairs(block.children) do
    local text = prefix .. " " .. node.name
    if node.kind == "broken" then
      r.errors = r.errors + 1
      r.say("ERROR   " .. full_name(block, node.name) .. " (in describe)\n" .. node.err)
    elseif node.kind == "pending" then
      if wanted(text, opts) then
        r.pendings = r.pendings + 1
        r.say("pending " .. full_name(block, node.name))
      end
    elseif node.kind == "block" then
      if ok then run_block(node.block_node, opts, r, text) end
    elseif wanted(text, opts) then
      if ok then
        run_test(node, r, opts)
      else
        r.errors = r.errors + 1
        r.say("ERROR   " .. full_name(block, node.name) .. " (setup failed)\n" .. tostring(err))
      end
    end
  end
  local tok, terr = run_hooks(block.teardown, true)
  if not tok then
    r.errors = r.errors + 1
    r.say("ERROR   " .. full_name(block, "teardown") .. "\n" .. tostring(terr))
  end
end

-- opts: files (paths), tags / exclude_tags (without '#'), print (a function
-- called with each line; default none), started(name) (called as each test
-- starts: a hang can then say which), not_applicable(err, name) (a reason
-- string when a test's error means "cannot run here" rather than a failure:
-- counted as n/a; not busted's). Returns counts and the whole log.
function M.run(opts)
  local lines = {}
  local r = {successes = 0, failures = 0, errors = 0, pendings = 0, skipped = 0}
  r.say = function(line)
    lines[#lines + 1] = line
    if opts.print then opts.print(line) end
  end
  local saved = {}
  for k, v in pairs(api) do
    saved[k] = rawget(_G, k)
    _G[k] = v
  end
  saved.assert = _G.assert
  _G.assert = M.assert
  package.loaded.luassert = M.assert
  for _, path in ipairs(opts.files) do
    local root = new_block(path, nil)
    current = root
    local chunk, lerr = loadfile(path)
    local ok, err = chunk ~= nil, lerr
    if chunk then ok, err = xpcall(chunk, debug.traceback) end
    current = nil
    if not ok then
      r.errors = r.errors + 1
      r.say("ERROR   " .. path .. " (loading)\n" .. tostring(err))
    else
      run_block(root, opts, r, "")
    end
  end
  for k in pairs(api) do _G[k] = saved[k] end
  _G.assert = saved.assert
  r.say(string.format("%d successes / %d failures / %d errors / %d pending / %d n/a",
                      r.successes, r.failures, r.errors, r.pendings, r.skipped))
  r.log = table.concat(lines, "\n")
  r.say = nil
  return r
end

return M
