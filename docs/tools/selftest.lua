--- selftest.lua: the documentation checkers catch what they are meant to.
--
--   lua5.4 docs/tools/selftest.lua [-- LDOC_COMMAND...]
--
-- Run from the repository root. Without an LDoc command only the parts
-- that need neither LDoc nor the built module run (c_reference.lua and the
-- Markdown renderer); with one (ctest's docs.tools_selftest passes it, and
-- LUA_PATH/LUA_CPATH for the module) also run_examples.lua and
-- check_lua_docs.lua, on fixtures and on a copy of the reference with
-- entries taken out.

local lua = arg[-1] or "lua5.4"
local ldoc_command = {}
for k = 1, #arg do
  if arg[k] == "--" then table.move(arg, k + 1, #arg, 1, ldoc_command) break end
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a shell command; returns its exit status (true for 0) and output.
local function run(command)
  local pipe = assert(io.popen(command .. " 2>&1", "r"))
  local output = pipe:read("a")
  return pipe:close() == true, output
end

local failed = 0
local function expect(condition, what, output)
  if condition then
    print("ok    " .. what)
  else
    failed = failed + 1
    print("FAIL  " .. what)
    if output then print((output:gsub("\n", "\n      "))) end
  end
end

local function lists_exactly(output, pattern, want)
  local got = {}
  for name in output:gmatch(pattern) do got[#got + 1] = name end
  table.sort(got)
  table.sort(want)
  return table.concat(got, " ") == table.concat(want, " ")
end

---------------------------------------------------------------------------
-- c_reference.lua

do
  local header = "docs/tools/fixtures/c_undocumented.h"
  local ok, out = run(lua .. " docs/tools/c_reference.lua --check " .. header)
  expect(not ok, "c_reference --check fails on a header with undocumented declarations", out)
  expect(lists_exactly(out, "%d: %a+ ([%w_ ]-) has no comment\n", {
    "DLB_API", "dlb_fixture_undocumented", "dlb_fixture_undocumented_type",
    "struct dlb_fixture_undocumented_plain", "dlb_fixture_undocumented_callback",
    "dlb_fixture_undocumented_inline",
  }), "c_reference --check names exactly the undocumented ones (a macro as a note)", out)
  expect(out:match("note: [^\n]*DLB_API") and not out:match("  [^\n]*DLB_API"),
         "an undocumented macro is a note, not a failure", out)

  local ok2, md = run(lua .. " docs/tools/c_reference.lua " .. header)
  expect(ok2, "c_reference renders the fixture", md)
  expect(md:find("A documented group: both share this comment.", 1, true)
         and md:find("`dlb_fixture_first`, <a id=\"dlb_fixture_second\"></a>`dlb_fixture_second`", 1, true),
         "a group of declarations shares its comment", md)
  expect(md:find("static inline int dlb_fixture_inline(int x);", 1, true)
         and not md:find("return 1", 1, true),
         "an inline function shows its signature, not its body", md)
  expect(md:find("A line comment\nover two lines.", 1, true), "// comments are read", md)
  expect(md:find("`dlb_fixture_options`", 1, true) and md:find("never 0 {", 1, true),
         "field comments with ; and { stay inside their struct", md)
  expect(not md:find("extern", 1, true), "extern \"C\" is not part of the reference", md)
  expect(md:find("X(TWO)", 1, true) and md:find("`dlb_fixture_id`", 1, true),
         "a directive continued over several lines is read whole", md)

  local ok3, out3 = run(lua .. " docs/tools/c_reference.lua --check src/dlbridge.h")
  expect(out3:match("%d+ public declarations") ~= nil, "c_reference reads src/dlbridge.h", out3)
end

---------------------------------------------------------------------------
-- ldoc_markdown.lua (the renderer LDoc uses for the reference)

do
  package.path = "docs/tools/?.lua;" .. package.path
  local render = require "ldoc_markdown"
  local html = render('Intro & <b> <code>a&lt;b</code> <a href="#x">x</a> **bold**\n\n' ..
                      'Options:\n- one\n  continued\n- two')
  local want = '<p>Intro &amp; &lt;b&gt; <code>a&lt;b</code> <a href="#x">x</a> ' ..
               '<strong>bold</strong></p>\n<p>Options:</p>\n<ul>\n<li>one continued</li>\n' ..
               '<li>two</li>\n</ul>'
  expect(html == want, "ldoc_markdown: escapes text, keeps LDoc's tags, renders lists",
         html .. "\n(wanted)\n" .. want)
end

---------------------------------------------------------------------------
-- run_examples.lua and check_lua_docs.lua (need the module and LDoc)

if #ldoc_command == 0 then
  print("(no LDoc command given: run_examples.lua and check_lua_docs.lua not exercised)")
else
  local ok, out = run(lua .. " docs/tools/run_examples.lua docs/tools/fixtures/examples")
  expect(not ok and out:match("3 examples, 2 checked values")
         and out:match("%(wrong%), example line 1")
         and out:match("%(raises%): raised [^\n]*SHAPE")
         and not out:match("%(right%)"),
         "run_examples fails on a wrong value and on an example that raises, not on a right one",
         out)

  -- A copy of what the checker reads, with entries taken out of the
  -- reference (dlbridge, Array, and the submodule dl.random with its
  -- Generator type), an example taken out, and entries that name nothing
  -- added.
  local _, tmp = run("mktemp -d")
  tmp = tmp:gsub("%s+$", "")
  local copied = run(string.format("mkdir -p %s/src && cp -r config.ld docs lua %s/ && cp -r src/lua %s/src/",
                                   quote(tmp), quote(tmp), quote(tmp)))
  expect(copied, "copied the reference to " .. tmp)
  local function edit(path, f)
    local file = assert(io.open(tmp .. "/" .. path, "rb"))
    local text = file:read("a")
    file:close()
    local new = f(text)
    assert(new ~= text, "selftest: the edit of " .. path .. " changed nothing")
    file = assert(io.open(tmp .. "/" .. path, "wb"))
    file:write(new)
    file:close()
  end
  edit("docs/api/dlbridge.luadoc", function(s)
    local a = s:find("--- Square root", 1, true)
    local b = s:find("\n---", a + 1, true)
    s = s:sub(1, a - 1) .. s:sub(b + 1)                                  -- dl.sqrt, a:sqrt
    s = s:gsub("%-%- @aliases subtract\n", "", 1)                        -- dl.subtract
    s = s:gsub("%-%- @field DLPACK_INVALID[^\n]*\n", "", 1)              -- dl.E.DLPACK_INVALID
    return s .. "\n--- Gone.\n-- @function frobnicate\n-- @usage print(1) --> 1\n"
  end)
  edit("docs/api/Array.luadoc", function(s)
    s = s:gsub("%-%- @aliases __close, __gc", "-- @aliases __close", 1) -- Array:__gc
    local a = s:find("--- The bytes of one element.", 1, true)
    local b = s:find("\n---", a + 1, true)
    return s:sub(1, a - 1) .. s:sub(b + 1)                               -- Array.itemsize
  end)
  edit("docs/api/random.luadoc", function(s)
    local function drop(first_line)
      local a = assert(s:find(first_line, 1, true), first_line)
      local b = s:find("\n---", a + 1, true) or #s
      s = s:sub(1, a - 1) .. s:sub(b + 1)
    end
    drop("--- Makes a generator in a state that")                       -- dl.random.from_state
    drop("--- Makes n independent child generators")                    -- Generator:spawn
    s = s:gsub("(%-%- @function Generator:state\n.-)%-%- @usage\n", "%1", 1) -- its example
    s = s:gsub("\n%-%-%- A random number generator", "\n--- Gone.\n-- @function gone\n" ..
               "-- @usage print(1) --> 1\n%0", 1)                        -- dl.random.gone
    return s .. "\n--- Gone.\n-- @function Generator:frobnicate\n-- @usage print(1) --> 1\n" ..
           "\n--- No such type.\n-- @function Other:thing\n-- @usage print(1) --> 1\n"
  end)
  local words = {}
  for k, w in ipairs(ldoc_command) do words[k] = quote(w) end
  local ok2, out2 = run(string.format("%s docs/tools/check_lua_docs.lua --root %s -- %s", lua,
                                      quote(tmp), table.concat(words, " ")))
  local undocumented = "\n" .. (out2:match("Undocumented[^\n]*\n(.-)\n\n") or "")
  local stale = "\n" .. ((out2 .. "\n\n"):match("Documented but not in the API[^\n]*\n(.-)\n\n")
                         or "")
  local other = "\n" .. (out2:match("Other problems:\n(.*)$") or "")
  expect(not ok2, "check_lua_docs fails when entries are missing", out2)
  expect(lists_exactly(undocumented, "\n  (%S+)", {
    "dl.sqrt", "Array:sqrt", "dl.subtract", "dl.E.DLPACK_INVALID", "Array:__gc", "Array.itemsize",
    "dl.random.from_state", "Generator:spawn",
  }), "check_lua_docs names every missing name (functions, methods, aliases, codes, attributes, " ..
     "a submodule's functions and its type's methods)", out2)
  expect(lists_exactly(stale, "\n  (%S+)",
                       { "dl.frobnicate", "dl.random.gone", "Generator:frobnicate" }),
         "check_lua_docs names an entry for something the API lacks (in dlbridge and dl.random)",
         out2)
  expect(other:find("\n  docs: Generator:state has no example (@usage)", 1, true)
         and other:find("'Other:thing' is in no @type", 1, true)
         and not other:find("unknown module", 1, true),
         "check_lua_docs wants an example on a Generator method and a known @type", out2)
  run("rm -rf " .. quote(tmp))

  local ok3, out3 = run(string.format("%s docs/tools/check_lua_docs.lua -- %s", lua,
                                      table.concat(words, " ")))
  expect(ok3, "check_lua_docs passes on the reference itself", out3)
end

if failed > 0 then
  print(failed .. " self-test(s) failed")
  os.exit(1)
end
print("all self-tests passed")
