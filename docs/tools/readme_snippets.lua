-- readme_snippets.lua -- compiles the C and C++ blocks of a Markdown file (ctest
-- docs.readme_snippets), so that every snippet the README shows as a file compiles as
-- shown.
--
--   lua5.4 docs/tools/readme_snippets.lua README.md --out=DIR --cc=CC --cxx=CXX \
--     [--compile=FLAG]... [--link=FLAG]...
--
-- The fence says what a block is:
--   ```c  / ```cpp                    a complete file: compiled (C11 / C++17, -Wall
--                                     -Wextra -Werror); one with a main() is also
--                                     linked (--link flags) and run, and must exit 0
--   ```c fragment / ```cpp fragment   part of a file: not compiled
-- Any other info string starting with c or cpp is refused, so that a typo never
-- skips a block. Exit status 1 on the first block that fails, or when the file has
-- no compiled block at all.

local function usage()
  io.stderr:write("usage: lua5.4 readme_snippets.lua FILE.md --out=DIR --cc=CC --cxx=CXX "
    .. "[--compile=FLAG]... [--link=FLAG]...\n")
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
  local o = {compile = {}, link = {}}
  for _, a in ipairs(argv) do
    local key, value = a:match("^%-%-(%w+)=(.*)$")
    if key == "compile" or key == "link" then
      table.insert(o[key], value)
    elseif key == "out" or key == "cc" or key == "cxx" then
      o[key] = value
    elseif not key and not o.file then
      o.file = a
    else
      usage()
    end
  end
  if not (o.file and o.out and o.cc and o.cxx) then usage() end
  return o
end

-- The fenced blocks of the file: {line =, info =, text =} (line of the opening fence).
local function blocks_of(path)
  local file = assert(io.open(path, "r"))
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

-- "c" / "cpp" -> language, compile; "c fragment" -> language, skip; else nil.
local function kind_of(info)
  local lang, rest = info:match("^(%S+)%s*(.*)$")
  if lang ~= "c" and lang ~= "cpp" then return nil end
  if rest == "" then return lang, true end
  if rest == "fragment" then return lang, false end
  error(("unknown marker %q: a C or C++ block is ```%s (compiled) or ```%s fragment")
    :format(info, lang, lang))
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

local o = parse_args(arg)
assert(os.execute("mkdir -p " .. shell_word(o.out)))
log_path = o.out .. "/last.log"
local compiled, fragments = 0, 0
for _, b in ipairs(blocks_of(o.file)) do
  local ok, lang, compile = pcall(kind_of, b.info)
  if not ok then
    io.stderr:write(("%s:%d: %s\n"):format(o.file, b.line, lang))
    os.exit(1)
  end
  if lang and not compile then
    fragments = fragments + 1
  elseif lang then
    local base = ("%s/readme_%d"):format(o.out, b.line)
    local source = base .. (lang == "c" and ".c" or ".cpp")
    local f = assert(io.open(source, "w"))
    f:write(b.text)
    f:close()
    local compiler = lang == "c" and o.cc or o.cxx
    local std = lang == "c" and "-std=c11" or "-std=c++17"
    local flags = {std, "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"}
    if not run(("%s %s %s -c %s -o %s"):format(shell_word(compiler), words(flags),
        words(o.compile), shell_word(source), shell_word(base .. ".o"))) then
      show_failure(o.file, b, "compile")
    end
    local what = "compiled"
    if b.text:find("%f[%w_]main%s*%(") then
      if not run(("%s %s -o %s %s"):format(shell_word(compiler), shell_word(base .. ".o"),
          shell_word(base), words(o.link))) then
        show_failure(o.file, b, "link")
      end
      if not run(shell_word(base)) then show_failure(o.file, b, "run") end
      what = "compiled, linked and ran"
    end
    compiled = compiled + 1
    print(("%s:%d: ```%s %s"):format(o.file, b.line, lang, what))
  end
end
print(("%d blocks compiled, %d fragments"):format(compiled, fragments))
if compiled == 0 then
  io.stderr:write(o.file .. ": no ```c or ```cpp block to compile\n")
  os.exit(1)
end
