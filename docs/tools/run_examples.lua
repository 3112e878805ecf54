--- run_examples.lua: runs every @usage example of the Lua reference
-- (docs/api/*.luadoc) against the built module, and checks the values the
-- examples promise.
--
--   lua5.4 docs/tools/run_examples.lua [DOCS_DIR]     (default docs/api)
--
-- LUA_PATH and LUA_CPATH must find the built module; ctest's docs.examples
-- sets them. Each example runs in its own environment with `dl` bound to
-- `require "dlbridge"`. A line `print(EXPR) --> TEXT` is a check: what
-- print would show for EXPR must be TEXT (runs of spaces and tabs compare
-- equal). Other print calls print nothing. An example that raises, or a
-- check that differs, fails the run.

local docs_dir = arg[1] or "docs/api"
local dl = require "dlbridge"

-- The .luadoc files of docs_dir, sorted.
local function doc_files()
  -- (LD_PRELOAD cleared: a sanitizer build preloads its runtime for the module only)
  local pipe = assert(io.popen("LD_PRELOAD= ls " .. docs_dir .. "/*.luadoc 2>/dev/null"))
  local files = {}
  for line in pipe:lines() do files[#files + 1] = line end
  pipe:close()
  table.sort(files)
  return files
end

-- The examples of one file: {name =, line =, lines =} for each @usage,
-- named after its entry's @function/@attribute/@table tag. An example runs
-- from its @usage to the next tag or the end of its comment block.
local function examples_of(path)
  local examples, entry, current = {}, "?", nil
  local n = 0
  for line in io.lines(path) do
    n = n + 1
    local text = line:match("^%s*%-%-%-? ?(.*)$")
    if not text or line:match("^%s*%-%-%-") then
      current = nil
      entry = "?"
    end
    if text then
      local kind, name = text:match("^@(%a+)%s*([%w_.:]*)")
      if kind == "usage" then
        current = { name = entry, line = n, lines = {} }
        examples[#examples + 1] = current
        current.lines[1] = text:match("^@usage%s+(.+)$") -- nil: the example starts below
      elseif kind then
        current = nil
        if kind == "function" or kind == "attribute" or kind == "table" then entry = name end
      elseif current then
        current.lines[#current.lines + 1] = text
      end
    end
  end
  return examples
end

local function normalize(s)
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- Rewrites `print(EXPR) --> TEXT` into a check; returns the source.
local function instrument(lines)
  local out = {}
  for k, line in ipairs(lines) do
    local indent, args, want = line:match("^(%s*)print(%b())%s*%-%->%s*(.-)%s*$")
    if indent then
      out[k] = string.format("%s__expect(%d, %q, %s)", indent, k, want, args:sub(2, -2))
    else
      out[k] = line
    end
  end
  return table.concat(out, "\n")
end

local function shown(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  return table.concat(parts, "\t", 1, parts.n)
end

local failures, count, checks = {}, 0, 0
for _, path in ipairs(doc_files()) do
  for _, ex in ipairs(examples_of(path)) do
    count = count + 1
    local where = string.format("%s:%d (%s)", path, ex.line, ex.name)
    local env = setmetatable({ dl = dl, print = function() end }, { __index = _G })
    env.__expect = function(k, want, ...)
      checks = checks + 1
      local got = shown(...)
      if normalize(got) ~= normalize(want) then
        failures[#failures + 1] = string.format("%s, example line %d: %s\n    shows: %s\n    doc says: %s",
                                                where, k, ex.lines[k], got, want)
      end
    end
    local chunk, err = load(instrument(ex.lines), "=" .. where, "t", env)
    if not chunk then
      failures[#failures + 1] = where .. ": does not compile: " .. err
    else
      local ok, e = pcall(chunk)
      if not ok then failures[#failures + 1] = where .. ": raised " .. tostring(e) end
    end
  end
end

print(string.format("%d examples, %d checked values", count, checks))
if count == 0 then
  print("no examples found under " .. docs_dir)
  os.exit(1)
end
if #failures > 0 then
  print("\n" .. table.concat(failures, "\n"))
  os.exit(1)
end
print("every example runs and shows what its entry says")
