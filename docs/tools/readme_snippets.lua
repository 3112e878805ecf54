-- readme_snippets.lua -- checks the code blocks of Markdown files (ctest
-- docs.readme_snippets: README.md and every page of docs/manual/), so that every
-- snippet the documentation shows compiles as shown.
--
--   lua5.4 docs/tools/readme_snippets.lua FILE.md... --out=DIR --cc=CC --cxx=CXX \
--     [--compile=FLAG]... [--link=FLAG]...
--
-- The fence says what a block is:
--   ```c  / ```cpp                    a complete file: compiled (C11 / C++17, -Wall
--                                     -Wextra -Werror); one with a main() is also
--                                     linked (--link flags) and run, and must exit 0
--   ```lua                            Lua code: compiled by this lua5.4 (load), not run
--   ```sh                             shell commands: parsed (sh -n), not run
--   ```c fragment / ```cpp fragment   part of a file, or lines that are not meant to
--   ```lua fragment / ```sh fragment  run together: not checked
-- Any other info string whose first word is c, cpp, lua or sh is refused, so that a
-- typo in the marker never skips a block; blocks of other languages (python, cmake)
-- are only counted.
-- Exit status 1 on the first block that fails, or when the files together have no
-- compiled C or C++ block at all.

local usage_text = "usage: lua5.4 readme_snippets.lua FILE.md... --out=DIR --cc=CC --cxx=CXX "
  .. "[--compile=FLAG]... [--link=FLAG]...\n"

local function usage()
  io.stderr:write(usage_text)
  os.exit(2)
end

local function shell_word(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function words(list)
  local out = {}
  for i, w in ipairs(list) do out[i] = shell_word(w) end
  return table.concat(out, " ")
end

local function parse_args(argv)
  local o = {compile = {}, link = {}, files = {}}
  for _, a in ipairs(argv) do
    local key, value = a:match("^%-%-(%w+)=(.*)$")
    if key == "compile" or key == "link" then
      table.insert(o[key], value)
    elseif key == "out" or key == "cc" or key == "cxx" then
      o[key] = value
    elseif not key and not a:match("^%-") then
      table.insert(o.files, a)
    else
      usage()
    end
  end
  if not (o.files[1] and o.out and o.cc and o.cxx) then usage() end
  return o
end

-- The fenced blocks of the file: {line =, info =, text =} (line of the opening fence).
local function blocks_of(path)
  local file, err = io.open(path, "r")
  if not file then
    io.stderr:write(err .. "\n")
    os.exit(1)
  end
  local list, current, n = {}, nil, 0
  for line in file:lines() do
    n = n + 1
    local fence, info = line:match("^%s*(```+)%s*(.-)%s*$")
    if current and fence and info == "" then
      list[#list + 1] = current
      current = nil
    elseif current then
      current.lines[#current.lines + 1] = line
    elseif fence then
      current = {line = n, info = info, lines = {}}
    end
  end
  file:close()
  if current then error(path .. ":" .. current.line .. ": block never closed") end
  for _, b in ipairs(list) do b.text = table.concat(b.lines, "\n") .. "\n" end
  return list
end

local checked_languages = {c = true, cpp = true, lua = true, sh = true}

-- "c" / "cpp" / "lua" / "sh" -> language, check; "c fragment" -> language, skip;
-- any other language -> nil.
local function kind_of(info)
  local lang, rest = info:match("^(%S+)%s*(.*)$")
  if not checked_languages[lang] then return nil end
  if rest == "" then return lang, true end
  if rest == "fragment" then return lang, false end
  error(("unknown marker %q: a %s block is ```%s (checked) or ```%s fragment")
    :format(info, lang, lang, lang), 0)
end

local log_path -- where the output of the last command goes

local function run(command)
  return os.execute(command .. " > " .. shell_word(log_path) .. " 2>&1") == true
end

local function show_failure(path, b, what)
  local file = io.open(log_path)
  local log = file and file:read("a") or ""
  if file then file:close() end
  io.stderr:write(("%s:%d: this ```%s block does not %s as shown:\n%s\n--- the block ---\n%s")
    :format(path, b.line, b.info, what, log, b.text))
  os.exit(1)
end

local function write_file(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- Compiles a C or C++ block; links and runs it when it has a main. Returns what it did.
local function check_compiled(o, path, b, base, lang)
  local source = base .. (lang == "c" and ".c" or ".cpp")
  write_file(source, b.text)
  local compiler = lang == "c" and o.cc or o.cxx
  local std = lang == "c" and "-std=c11" or "-std=c++17"
  local flags = {std, "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"}
  if not run(("%s %s %s -c %s -o %s"):format(shell_word(compiler), words(flags),
      words(o.compile), shell_word(source), shell_word(base .. ".o"))) then
    show_failure(path, b, "compile")
  end
  if not b.text:find("%f[%w_]main%s*%(") then return "compiled" end
  if not run(("%s %s -o %s %s"):format(shell_word(compiler), shell_word(base .. ".o"),
      shell_word(base), words(o.link))) then
    show_failure(path, b, "link")
  end
  if not run(shell_word(base)) then show_failure(path, b, "run") end
  return "compiled, linked and ran"
end

-- Compiles a Lua block without running it (the chunk's syntax, as lua5.4 reads it).
local function check_lua(path, b)
  local ok, err = load(b.text, ("=%s:%d"):format(path, b.line), "t")
  if not ok then
    write_file(log_path, err .. "\n")
    show_failure(path, b, "compile")
  end
  return "compiled"
end

-- Parses a shell block without running it.
local function check_sh(path, b, base)
  write_file(base .. ".sh", b.text)
  if not run("sh -n " .. shell_word(base .. ".sh")) then show_failure(path, b, "parse") end
  return "parsed"
end

local o = parse_args(arg)
assert(os.execute("mkdir -p " .. shell_word(o.out)))
log_path = o.out .. "/last.log"
local counts = {compiled = 0, lua = 0, sh = 0, fragments = 0, other = 0}
for _, path in ipairs(o.files) do
  -- Output files are named after the file and the line of the block's fence.
  local stem = path:gsub("%.md$", ""):gsub("[^%w]", "_")
  for _, b in ipairs(blocks_of(path)) do
    local ok, lang, check = pcall(kind_of, b.info)
    if not ok then
      io.stderr:write(("%s:%d: %s\n"):format(path, b.line, lang))
      os.exit(1)
    end
    local base = ("%s/%s_%d"):format(o.out, stem, b.line)
    local what
    if not lang then
      counts.other = counts.other + 1
    elseif not check then
      counts.fragments = counts.fragments + 1
    elseif lang == "lua" then
      what = check_lua(path, b)
      counts.lua = counts.lua + 1
    elseif lang == "sh" then
      what = check_sh(path, b, base)
      counts.sh = counts.sh + 1
    else
      what = check_compiled(o, path, b, base, lang)
      counts.compiled = counts.compiled + 1
    end
    if what then print(("%s:%d: ```%s %s"):format(path, b.line, lang, what)) end
  end
end
print(("%d file(s): %d C/C++ blocks compiled, %d Lua blocks compiled, %d sh blocks parsed, "
  .. "%d fragments, %d other blocks (not checked)"):format(#o.files, counts.compiled,
  counts.lua, counts.sh, counts.fragments, counts.other))
if counts.compiled == 0 then
  io.stderr:write("no ```c or ```cpp block to compile in " .. table.concat(o.files, " ") .. "\n")
  os.exit(1)
end
