-- readme_from_source.lua -- runs the README's block that uses the built module from
-- Lua (ctest docs.readme_from_source), exactly as written.
--
--   lua5.4 docs/tools/readme_from_source.lua README.md SOURCE_DIR BUILD_DIR WORK_DIR
--
-- The block is the second fenced block of the README, the one right after the two
-- commands: a ```sh block that sets LUA_CPATH. It runs under `sh -e` in WORK_DIR, where
-- `lua` links to SOURCE_DIR/lua and `build` to BUILD_DIR (so `build` may be any build
-- directory), with no LUA_PATH or LUA_CPATH from outside; it must exit 0 and print
-- the module's version first.

local readme, source, build, work = arg[1], arg[2], arg[3], arg[4]
if not (readme and source and build and work) then
  io.stderr:write("usage: lua5.4 readme_from_source.lua README.md SOURCE_DIR BUILD_DIR WORK_DIR\n")
  os.exit(2)
end

local function shell_word(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function fail(message)
  io.stderr:write(readme .. ": " .. message .. "\n")
  os.exit(1)
end

-- The n-th fenced block: its info string and text.
local function block(path, wanted)
  local n, inside, info, lines = 0, false, nil, {}
  for line in assert(io.open(path)):lines() do
    local fence, rest = line:match("^(```+)%s*(.-)%s*$")
    if fence and not inside then
      n, inside, info, lines = n + 1, true, rest, {}
    elseif fence and rest == "" then
      inside = false
      if n == wanted then return info, table.concat(lines, "\n") .. "\n" end
    elseif inside then
      lines[#lines + 1] = line
    end
  end
end

local info, text = block(readme, 2)
if info ~= "sh" or not (text or ""):find("LUA_CPATH", 1, true) then
  fail("the block after the two commands must be the ```sh block that sets LUA_CPATH")
end

assert(os.execute(("rm -rf %s && mkdir -p %s && ln -s %s %s/lua && ln -s %s %s/build"):format(
  shell_word(work), shell_word(work), shell_word(source .. "/lua"), shell_word(work),
  shell_word(build), shell_word(work))))
local script = work .. "/block.sh"
local file = assert(io.open(script, "w"))
file:write(text)
file:close()

local command = ("cd %s && env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 "
  .. "sh -e block.sh 2>&1"):format(shell_word(work))
local pipe = assert(io.popen(command))
local output = pipe:read("a")
local ok = pipe:close()
io.write(text, "--- prints ---\n", output)
if not ok then fail("the block failed") end
if not output:match("^%d+%.%d+%.%d+") then fail("the block did not print the module's version") end
