--- c_reference.lua: the C API reference, generated from the comments of the
-- public headers, and the check that every public declaration has one.
--
--   lua5.4 docs/tools/c_reference.lua [--output FILE] [--check] HEADER...
--
-- Writes Markdown (to FILE, else stdout): for each header, its opening
-- comment, an index, then every public declaration in header order with
-- the comment that documents it. With --check it writes nothing and exits
-- 1 when a public declaration has no comment, listing them (macros without
-- one are listed as notes, not failures).
--
-- Public: functions declared with DLB_API and `static inline` functions
-- (header-only helpers), typedefs, struct/union/enum definitions; macros
-- are listed too (not include guards, and a macro defined in several
-- branches of an #if once). A declaration is documented when
--   (a) a comment stands above it, with only blank lines and preprocessor
--       lines (#define, #if, ...) between, or
--   (b) it directly follows (no blank line) a documented declaration: a
--       group of declarations shares the comment above the first, or
--   (c) the nearest comment above it names it (`dlb_borrow fills *view ...`).
-- A header's opening comment describes the header, not what follows it.

local output_path, check, headers = nil, false, {}
do
  local k = 1
  while k <= #arg do
    if arg[k] == "--output" then
      output_path, k = arg[k + 1], k + 2
    elseif arg[k] == "--check" then
      check, k = true, k + 1
    else
      headers[#headers + 1], k = arg[k], k + 1
    end
  end
  if #headers == 0 then
    io.stderr:write("usage: c_reference.lua [--output FILE] [--check] HEADER...\n")
    os.exit(2)
  end
end

---------------------------------------------------------------------------
-- Scanning: a header becomes a list of chunks, each with its first and
-- last line: {kind = "comment"|"preproc"|"decl"|"linkage", text =, first =, last =}.

-- The position after the comment or string literal starting at i, or nil.
local function skip_literal(s, i)
  local two = s:sub(i, i + 1)
  if two == "/*" then
    local e = s:find("*/", i + 2, true)
    return e and e + 2 or #s + 1
  elseif two == "//" then
    local e = s:find("\n", i, true)
    return e or #s + 1
  end
  local q = s:sub(i, i)
  if q == '"' or q == "'" then
    local j = i + 1
    while j <= #s do
      local c = s:sub(j, j)
      if c == "\\" then
        j = j + 2
      elseif c == q then
        return j + 1
      else
        j = j + 1
      end
    end
    return #s + 1
  end
end

local function scan(text)
  local chunks, i, line = {}, 1, 1
  local function lines_in(a, b)
    local _, n = text:sub(a, b):gsub("\n", "")
    return n
  end
  local function add(kind, a, b)
    local first = line + lines_in(i, a - 1)
    local last = first + lines_in(a, b)
    chunks[#chunks + 1] = { kind = kind, text = text:sub(a, b), first = first, last = last }
    line = last
    i = b + 1
  end
  while true do
    local a = text:find("%S", i)
    if not a then break end
    local two = text:sub(a, a + 1)
    if two == "/*" then
      add("comment", a, skip_literal(text, a) - 1)
    elseif two == "//" then
      -- consecutive // lines make one comment
      local b = skip_literal(text, a) - 1
      while text:match("^\n[ \t]*//", b + 1) do
        local next_start = text:find("//", b + 1, true)
        b = skip_literal(text, next_start) - 1
      end
      add("comment", a, b)
    elseif text:match('^extern%s*"C"%s*{', a) or text:sub(a, a) == "}" then
      -- extern "C" { and its closing }: no declaration of their own
      local _, b = text:find('^extern%s*"C"%s*{', a)
      add("linkage", a, b or a)
    elseif text:sub(a, a) == "#" then
      local b = a -- then the newline ending the directive, past \ continuations
      repeat
        b = text:find("\n", b, true) or #text + 1
        local continued = text:sub(b - 1, b - 1) == "\\" and b <= #text
        if continued then b = b + 1 end
      until not continued
      add("preproc", a, b - 1)
    else
      -- a declaration: up to ; at depth 0, or the } closing a function body
      local j, depth, body_start = a, 0, nil
      while j <= #text do
        local after = skip_literal(text, j)
        if after then
          j = after
        else
          local c = text:sub(j, j)
          if c == "{" then
            if depth == 0 and text:sub(a, j - 1):match("%)%s*$") then body_start = j end
            depth = depth + 1
          elseif c == "}" then
            depth = depth - 1
            if depth == 0 and body_start then break end
          elseif c == ";" and depth <= 0 then
            break
          end
          j = j + 1
        end
      end
      add("decl", a, math.min(j, #text))
      chunks[#chunks].body_start = body_start and body_start - a + 1
    end
  end
  return chunks
end

-- Drops extern "C" { and its } (what C++ compilers alone see), and marks
-- the include guard.
local function tidy(chunks)
  local out = {}
  for k, c in ipairs(chunks) do
    if c.kind ~= "linkage" then
      local prev = chunks[k - 1]
      local guard = prev and prev.kind == "preproc" and prev.text:match("^#%s*ifndef%s+([%w_]+)")
      if guard and c.kind == "preproc" and guard == c.text:match("^#%s*define%s+([%w_]+)") then
        c.guard = true
      end
      out[#out + 1] = c
    end
  end
  return out
end

---------------------------------------------------------------------------
-- What a chunk declares.

local function strip_comments(s)
  local out, i = {}, 1
  while i <= #s do
    local two = s:sub(i, i + 1)
    if two == "/*" or two == "//" then
      i = skip_literal(s, i)
      out[#out + 1] = " "
    else
      out[#out + 1] = s:sub(i, i)
      i = i + 1
    end
  end
  return table.concat(out)
end

-- {name =, kind = "function"|"type"|"macro", public =} for a decl or #define chunk, or nil.
local function describe(c)
  if c.kind == "preproc" then
    local name = c.text:match("^#%s*define%s+([%w_]+)")
    if name and not c.guard then return { name = name, kind = "macro", public = true } end
    return nil
  end
  if c.kind ~= "decl" then return nil end
  local code = strip_comments(c.text)
  if c.body_start then code = code:sub(1, c.body_start - 1) end
  if code:match("^%s*typedef%f[%W]") then
    local flat = code:gsub("%b{}", " "):gsub("%b[]", " ")
    local fp = flat:match("%(%s*%*%s*([%w_]+)%s*%)%s*%(") -- typedef int (*name)(...);
    local name = fp or flat:match("([%w_]+)%s*;%s*$")
    return { name = name or "?", kind = "type", public = true }
  end
  local tag, tname = code:match("^%s*(%a+)%s+([%w_]+)%s*%b{}%s*;")
  if tag == "struct" or tag == "union" or tag == "enum" then
    return { name = tag .. " " .. tname, kind = "type", public = true }
  end
  local before_paren = code:match("^([^(]*)%(")
  local fname = before_paren and before_paren:match("([%w_]+)%s*$")
  if fname then
    local exported = code:match("%f[%w_]DLB_API%f[^%w_]") ~= nil
    local inline = code:match("%f[%w_]static%f[^%w_]") and code:match("%f[%w_]inline%f[^%w_]")
    if exported or (inline and c.body_start) then
      return { name = fname, kind = "function", public = true }
    end
  end
  return nil -- static assertions, variables, ...: not part of the reference
end

-- The text of a comment chunk without its comment markers.
local function comment_text(s)
  if s:match("^//") then
    local lines = {}
    for l in s:gmatch("[^\n]+") do lines[#lines + 1] = (l:gsub("^%s*//%s?", "")) end
    return table.concat(lines, "\n")
  end
  s = s:gsub("^/%*+", ""):gsub("%*+/$", "")
  local lines = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do
    lines[#lines + 1] = (l:gsub("^%s*%*? ?", ""):gsub("%s+$", ""))
  end
  while lines[1] == "" do table.remove(lines, 1) end
  while lines[#lines] == "" do table.remove(lines) end
  return table.concat(lines, "\n")
end

local function names(text, name)
  local bare = name:gsub("^%a+ ", "") -- "struct x" is named by "x"
  return text:find("%f[%w_]" .. bare .. "%f[^%w_]") ~= nil
end

---------------------------------------------------------------------------
-- Units: a comment and what it documents, or one undocumented item.

local function analyse(path)
  local f = assert(io.open(path, "rb"))
  local chunks = tidy(scan(f:read("a")))
  f:close()
  local intro
  for _, c in ipairs(chunks) do
    if c.kind == "comment" then intro = c break end
    if c.kind == "decl" then break end
  end
  local units, unit_of, seen = {}, {}, {}
  for k, c in ipairs(chunks) do
    local item = describe(c)
    if item and item.public and not seen[item.name] then
      seen[item.name] = true
      item.chunk, item.line = c, c.first
      local doc
      -- (a) a comment above, past blank and preprocessor lines only
      for j = k - 1, 1, -1 do
        local p = chunks[j]
        if p.kind == "comment" then
          if p ~= intro then doc = p end
          break
        elseif p.kind == "decl" then
          -- (b) the previous declaration, on the line right above, is documented
          if j == k - 1 and p.last + 1 == c.first and unit_of[p] and unit_of[p].comment then
            doc = unit_of[p].comment
          end
          break
        end
      end
      -- (c) the nearest comment above names it
      if not doc then
        for j = k - 1, 1, -1 do
          if chunks[j].kind == "comment" then
            if names(chunks[j].text, item.name) then doc = chunks[j] end
            break
          end
        end
      end
      local unit
      if doc and doc ~= intro then
        unit = units[#units]
        if not (unit and unit.comment == doc) then
          unit = { comment = doc, items = {} }
          units[#units + 1] = unit
        end
      elseif doc == intro and doc then
        unit = { comment = nil, named_by_intro = true, items = {} }
        units[#units + 1] = unit
      else
        unit = { items = {} }
        units[#units + 1] = unit
      end
      item.documented = doc ~= nil
      unit.items[#unit.items + 1] = item
      unit_of[c] = unit
    end
  end
  return { path = path, intro = intro, units = units }
end

---------------------------------------------------------------------------
-- Markdown.

-- Prose from a comment: Markdown's specials escaped outside `code`
-- spans, lines kept (lists written as "- " stay lists).
local function prose(text)
  local out = {}
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local parts, pos = {}, 1
    while pos <= #line do
      local a, b = line:find("`[^`]*`", pos)
      local plain = line:sub(pos, a and a - 1 or #line)
      -- _ only at a word's edge: GitHub's Markdown never emphasises inside words
      plain = plain:gsub("()([\\*_%[%]<>])()", function(at, ch, after)
        if ch == "<" then return "&lt;" elseif ch == ">" then return "&gt;" end
        if ch == "_" and plain:sub(at - 1, at - 1):match("[%w_]")
            and plain:sub(after, after):match("[%w_]") then
          return ch
        end
        return "\\" .. ch
      end)
      parts[#parts + 1] = plain
      if not a then break end
      parts[#parts + 1] = line:sub(a, b)
      pos = b + 1
    end
    out[#out + 1] = table.concat(parts)
  end
  return table.concat(out, "\n")
end

local function anchor(name)
  return (name:gsub("[^%w_]+", "-"):lower())
end

-- The declaration as a reader needs it: the comment-free text of a
-- function without its body, else the chunk as written.
local function declaration_text(item)
  local c = item.chunk
  if c.kind == "decl" and c.body_start then
    return (c.text:sub(1, c.body_start - 1):gsub("%s+$", "")) .. ";"
  end
  return c.text
end

local function render(files)
  local out = { "# dlbridge C API reference", "",
    "Generated from the comments of the public headers by `docs/tools/c_reference.lua`;",
    "edit the headers, not this file.", "" }
  for _, file in ipairs(files) do
    local base = file.path:match("([^/]+)$")
    out[#out + 1] = "## " .. base
    out[#out + 1] = ""
    if file.intro then
      out[#out + 1] = prose(comment_text(file.intro.text))
      out[#out + 1] = ""
    end
    local index = { ["function"] = {}, type = {}, macro = {} }
    for _, unit in ipairs(file.units) do
      for _, item in ipairs(unit.items) do
        table.insert(index[item.kind], string.format("[`%s`](#%s)", item.name, anchor(item.name)))
      end
    end
    for _, kind in ipairs({ { "function", "Functions" }, { "type", "Types" }, { "macro", "Macros" } }) do
      if #index[kind[1]] > 0 then
        out[#out + 1] = string.format("**%s:** %s", kind[2], table.concat(index[kind[1]], ", "))
        out[#out + 1] = ""
      end
    end
    for _, unit in ipairs(file.units) do
      local titles, code = {}, {}
      for _, item in ipairs(unit.items) do
        titles[#titles + 1] = string.format('<a id="%s"></a>`%s`', anchor(item.name), item.name)
        code[#code + 1] = declaration_text(item)
      end
      out[#out + 1] = "### " .. table.concat(titles, ", ")
      out[#out + 1] = ""
      out[#out + 1] = "```c"
      out[#out + 1] = table.concat(code, "\n")
      out[#out + 1] = "```"
      out[#out + 1] = ""
      if unit.comment then
        out[#out + 1] = prose(comment_text(unit.comment.text))
      elseif unit.named_by_intro then
        out[#out + 1] = "(Described in the header's opening comment above.)"
      else
        out[#out + 1] = "(No comment.)"
      end
      out[#out + 1] = ""
    end
  end
  return table.concat(out, "\n")
end

---------------------------------------------------------------------------

local files = {}
for _, path in ipairs(headers) do files[#files + 1] = analyse(path) end

if check then
  local missing, notes, count = {}, {}, 0
  for _, file in ipairs(files) do
    for _, unit in ipairs(file.units) do
      for _, item in ipairs(unit.items) do
        count = count + 1
        if not item.documented then
          local line = string.format("%s:%d: %s %s has no comment", file.path, item.line,
                                     item.kind, item.name)
          if item.kind == "macro" then notes[#notes + 1] = line else missing[#missing + 1] = line end
        end
      end
    end
  end
  print(string.format("%d public declarations in %d header(s)", count, #files))
  for _, line in ipairs(notes) do print("note: " .. line) end
  if #missing > 0 then
    print("\nPublic functions and types without a comment directly above them (or above the\n" ..
          "group of declarations they belong to, or naming them):")
    for _, line in ipairs(missing) do print("  " .. line) end
    os.exit(1)
  end
  print("every public function and type has its comment")
  os.exit(0)
end

local markdown = render(files)
if output_path then
  local f = assert(io.open(output_path, "wb"))
  f:write(markdown, "\n")
  f:close()
else
  io.write(markdown, "\n")
end
