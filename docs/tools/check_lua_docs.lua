--- check_lua_docs.lua: fails when a public name of the Lua API has no entry
-- in the LDoc reference (docs/api/*.luadoc), or an entry names something
-- the API no longer has.
--
--   lua5.4 docs/tools/check_lua_docs.lua [--root DIR] -- LDOC_COMMAND...
--
-- e.g. `-- lua5.4 /usr/bin/ldoc`; LUA_PATH and LUA_CPATH must find the built
-- module (`require "dlbridge"`); ctest's docs.lua_complete sets them.
--
-- The public names, read from the running module:
--   dl.NAME         every key of the module table (functions and values);
--   Array:NAME      every Array method (the table Array's __index looks names
--                   up in: its third upvalue, see src/lua/array.c) and every
--                   function of the Array metatable (operators, __index, ...);
--   Error:NAME      the names error_index (src/lua/error.c) answers and the functions of dl.Error;
--   Capsule:NAME    the functions of a capsule's metatable;
--   dl.E fields     every error code;
--   dl.SUB.NAME     every key of a submodule table (dl.random), and
--   Type:NAME       for the objects a submodule makes (Generator): every
--                   function of their metatable (protected: read through
--                   debug.getmetatable) and every key of its __index table;
--                   SUBMODULES below lists them.
-- and, since no Lua code can list them, read from the C sources:
--   Array.NAME      the attributes that index_attribute (src/lua/array.c) knows;
--   Capsule.NAME    the fields that index_unprotected (src/lua/dlpack.c) knows;
--   Error.NAME      the fields push_fields (src/lua/error.c) sets.
--
-- The documented names are what LDoc itself parsed (its --filter hook and
-- docs/tools/ldoc_items.lua): the entries of module dlbridge (dl.NAME) and
-- of the classes Array, Error and Capsule (Array:NAME for functions,
-- Array.NAME for attributes), the entries of a submodule's @module
-- dlbridge.SUB (dl.SUB.NAME; the module documents dl.SUB itself) and of the
-- @type sections in it (Type:NAME), plus what three tags add to an entry:
--   @aliases n1, n2   other names of the same function in the same table
--                     (on dl.sub: "subtract"; on Array:delete: "__close, __gc");
--   @method a:f(...)  the Array method(s) a:f that are this dl function with
--                     the array as first argument (every a:NAME in the text);
--   @operator ...     the metamethods that call this dl function (every
--                     __NAME in the text: "a + b (__add)").
-- Every function entry (submodules' and their types' too) must also carry
-- an example (@usage).

local root = "."
local ldoc_command = {}
do
  local k = 1
  while k <= #arg do
    if arg[k] == "--root" then
      root, k = arg[k + 1], k + 2
    elseif arg[k] == "--" then
      table.move(arg, k + 1, #arg, 1, ldoc_command)
      break
    else
      io.stderr:write("usage: check_lua_docs.lua [--root DIR] -- LDOC_COMMAND...\n")
      os.exit(2)
    end
  end
  if #ldoc_command == 0 then
    io.stderr:write("check_lua_docs.lua: no LDoc command given (after --)\n")
    os.exit(2)
  end
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

local function set_of(list)
  local set = {}
  for _, v in ipairs(list) do set[v] = true end
  return set
end

local function sorted_keys(set)
  local keys = {}
  for k in pairs(set) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local failures = {}
local function fail(message) failures[#failures + 1] = message end

---------------------------------------------------------------------------
-- What LDoc parsed.

-- Runs LDoc's --filter over config.ld; returns the ITEM/TAG/FIELD lines.
-- LD_PRELOAD is cleared: a sanitizer build preloads its runtime for the
-- module in this process, and LDoc needs none of it.
local function ldoc_facts()
  local words = {}
  for k, w in ipairs(ldoc_command) do words[k] = shell_quote(w) end
  local command = string.format(
    "cd %s && LD_PRELOAD= LUA_PATH=%s %s --filter ldoc_items.dump -c config.ld . 2>&1",
    shell_quote(root), shell_quote(root .. "/docs/tools/?.lua;;"), table.concat(words, " "))
  local pipe = assert(io.popen(command, "r"))
  local output = pipe:read("a")
  local ok = pipe:close()
  local facts = {}
  for line in output:gmatch("[^\n]+") do
    local kind = line:match("^(%u+)\t")
    if kind == "ITEM" or kind == "TAG" or kind == "FIELD" then
      local fields = {}
      for f in (line .. "\t"):gmatch("(.-)\t") do fields[#fields + 1] = f end
      facts[#facts + 1] = fields
    end
  end
  if not ok or #facts == 0 then
    io.stderr:write("check_lua_docs.lua: LDoc failed (" .. command .. "):\n" .. output .. "\n")
    os.exit(1)
  end
  return facts
end

-- The classes documented with @classmod, by LDoc module name.
local CLASSES = { Array = true, Error = true, Capsule = true }

-- The submodules, documented with @module dlbridge.SUB, by LDoc module name:
-- their functions are dl.SUB.f (namespace: the key of dl), and the @type
-- sections in them are the classes they make (Type:f), each with a function
-- that makes one object of it (its metatable lists the methods).
local SUBMODULES = {
  ["dlbridge.linalg"] = { namespace = "dl.linalg", types = {} },
  ["dlbridge.random"] = {
    namespace = "dl.random",
    types = { Generator = function(dl) return dl.random.default_rng(0) end },
  },
}

-- An entry's namespace in documented (see below) and its full name, for
-- LDoc's module name and item name: "dl", "dl.f" in module dlbridge;
-- "dl.SUB", "dl.SUB.f" or "Type", "Type:f" in a submodule; the class and
-- the item's name in a class.
local function entry_namespace(module, item)
  if module == "dlbridge" then return "dl", "dl." .. item end
  local sub = SUBMODULES[module]
  if sub then
    local class = item:match("^([%w_]+)[.:]")
    if class then return class, item end
    return sub.namespace, sub.namespace .. "." .. item
  end
  return module, item
end

-- A submodule's entry: dl.SUB.f, or Type:f of one of its @type sections.
local function document_submodule_item(doc, functions, module, item_type, name)
  local sub = SUBMODULES[module]
  doc.dl[sub.namespace:match("^dl%.(.+)$")] = "@module " .. module
  local class, member = name:match("^([%w_]+)[.:]([%w_]+)$")
  local namespace, full = entry_namespace(module, name)
  if class and not sub.types[class] then
    fail(string.format("docs: %s entry '%s' is in no @type of the module (expected %s)", module,
                       name, table.concat(sorted_keys(sub.types), ", ")))
    return
  elseif not class and name:find("[.:]") then
    fail(string.format("docs: %s entry '%s' is not named NAME or TYPE:NAME", module, name))
    return
  end
  doc[namespace][member or name] = full
  if item_type == "function" then functions[full] = true end
end

-- documented[namespace][name] = where it is documented (for messages).
-- Namespaces: "dl", "Array", "Error", "Capsule" (functions and values),
-- "Array.", "Error.", "Capsule." (attributes and fields), "dl.E" (codes),
-- and per submodule "dl.SUB" (its functions) and each of its types.
local function documented_names(facts)
  local doc = setmetatable({}, { __index = function(t, k) t[k] = {} return t[k] end })
  local usage, functions = {}, {}
  for _, f in ipairs(facts) do
    local kind, module = f[1], f[2]
    if kind == "ITEM" then
      local item_type, name = f[3], f[4]
      if module == "dlbridge" then
        doc.dl[name] = "dl." .. name
        if item_type == "function" then functions["dl." .. name] = true end
      elseif SUBMODULES[module] then
        document_submodule_item(doc, functions, module, item_type, name)
      elseif CLASSES[module] then
        local member = name:match("^" .. module .. "[.:]([%w_]+)$")
        if not member then
          fail(string.format("docs: %s entry '%s' is not named %s:NAME or %s.NAME", module, name,
                             module, module))
        elseif item_type == "attribute" then
          doc[module .. "."][member] = name
        else
          doc[module][member] = name
          if item_type == "function" then functions[name] = true end
        end
      else
        fail(string.format("docs: unknown module or class '%s' (expected dlbridge, %s, %s)",
                           module, table.concat(sorted_keys(CLASSES), ", "),
                           table.concat(sorted_keys(SUBMODULES), ", ")))
      end
    elseif kind == "TAG" then
      local item, tag, value = f[3], f[4], f[5]
      local namespace, where = entry_namespace(module, item)
      if tag == "usage" then
        usage[where] = true
      elseif tag == "aliases" then
        for alias in value:gmatch("[%w_]+") do doc[namespace][alias] = where .. " (@aliases)" end
      elseif tag == "method" then
        for method in value:gmatch("%f[%w_]a:([%w_]+)") do doc.Array[method] = where .. " (@method)" end
      elseif tag == "operator" then
        for mm in value:gmatch("(__[%w_]+)") do doc.Array[mm] = where .. " (@operator)" end
      end
    elseif kind == "FIELD" and module == "dlbridge" and f[3] == "E" then
      doc["dl.E"][f[4]] = "dl.E"
    end
  end
  for name in pairs(functions) do
    if not usage[name] then fail("docs: " .. name .. " has no example (@usage)") end
  end
  return doc
end

---------------------------------------------------------------------------
-- What the API has.

-- The names a C function of src/lua compares or sets: the body of `static
-- ... fname(` up to the closing brace in column 0, matched with pattern.
local function names_in_c_function(file, fname, pattern)
  local text = read_file(root .. "/" .. file)
  local body = text:match("\n[^\n]-%f[%w_]" .. fname .. "%(.-\n}")
  if not body then
    fail(string.format("checker: cannot find %s() in %s; update docs/tools/check_lua_docs.lua",
                       fname, file))
    return {}
  end
  local names = {}
  for name in body:gmatch(pattern) do names[name] = true end
  if next(names) == nil then
    fail(string.format("checker: %s() in %s names nothing; update docs/tools/check_lua_docs.lua",
                       fname, file))
  end
  return names
end

-- The function-valued keys of t (metamethods of a metatable).
local function function_keys(t)
  local names = {}
  for k, v in pairs(t) do
    if type(k) == "string" and type(v) == "function" then names[k] = true end
  end
  return names
end

local function public_names()
  local ok, dl = pcall(require, "dlbridge")
  if not ok then
    io.stderr:write("check_lua_docs.lua: cannot load the module: " .. tostring(dl) ..
                    "\n(set LUA_PATH and LUA_CPATH to the sources and the build)\n")
    os.exit(1)
  end
  local api = {}
  api.dl = {}
  for k in pairs(dl) do api.dl[k] = true end

  local array = dl.zeros { 1 }
  local array_mt = getmetatable(array)
  local _, methods = debug.getupvalue(array_mt.__index, 3)
  if type(methods) ~= "table" or type(methods.get) ~= "function" then
    io.stderr:write("check_lua_docs.lua: the Array methods table is no longer the third upvalue\n" ..
                    "of __index (src/lua/internal.h, DLB_UV_METHODS): update the checker\n")
    os.exit(1)
  end
  api.Array = function_keys(array_mt)
  for k in pairs(methods) do api.Array[k] = true end
  api["Array."] = names_in_c_function("src/lua/array.c", "index_attribute",
                                      'strcmp%(name, "([%w_]+)"%)')

  -- Error's __index is a function (a table would be writable): its methods
  -- are the names error_index answers.
  api.Error = function_keys(dl.Error)
  api.Error.__index = nil
  for k in pairs(names_in_c_function("src/lua/error.c", "error_index",
                                     'strcmp%(key, "([%w_]+)"%)')) do api.Error[k] = true end
  api["Error."] = names_in_c_function("src/lua/error.c", "push_fields",
                                      'lua_setfield%(L, %-2, "([%w_]+)"%)')

  local capsule = array:to_dlpack()
  api.Capsule = function_keys(getmetatable(capsule))
  api["Capsule."] = names_in_c_function("src/lua/dlpack.c", "index_unprotected",
                                        'strcmp%(k, "([%w_]+)"%)')

  api["dl.E"] = {}
  for k in pairs(dl.E) do api["dl.E"][k] = true end

  -- Submodules (read-only stand-ins, userdata: pairs goes through) and the
  -- objects they make, whose metatables are protected: the debug library
  -- reaches them.
  local function listable(v) return type(v) == "table" or type(v) == "userdata" end
  for _, sub in pairs(SUBMODULES) do
    local t = dl[sub.namespace:match("^dl%.(.+)$")]
    api[sub.namespace] = {}
    for k in pairs(listable(t) and t or {}) do api[sub.namespace][k] = true end
    for class, make in pairs(sub.types) do
      local ok, object = pcall(make, dl)
      local mt = ok and debug.getmetatable(object)
      if type(mt) ~= "table" then
        io.stderr:write(string.format("check_lua_docs.lua: cannot make a %s to read its methods " ..
                                      "(%s): update SUBMODULES in the checker\n", class,
                                      tostring(ok and "no metatable" or object)))
        os.exit(1)
      end
      api[class] = function_keys(mt)
      if listable(mt.__index) then
        api[class].__index = nil
        for k in pairs(mt.__index) do api[class][k] = true end
      end
    end
  end
  return api, dl, array, capsule
end

-- Whether a documented field that the scan did not find exists all the
-- same: Array and Capsule fields are read from live objects; an Error field
-- set outside push_fields (err.cause, err.traceback) must at least appear
-- in the sources as "name" (C) or .name = (Lua).
local function field_exists(namespace, name, array, capsule)
  if namespace == "Array." then return array[name] ~= nil end
  if namespace == "Capsule." then return capsule[name] ~= nil end
  local sources = {}
  for _, file in ipairs({ "array.c", "error.c", "dlpack.c", "backends.c", "capi.c" }) do
    local f = io.open(root .. "/src/lua/" .. file, "rb")
    if f then sources[#sources + 1] = f:read("a") f:close() end
  end
  local c, lua = table.concat(sources), read_file(root .. "/lua/dlbridge/init.lua")
  return c:find('"' .. name .. '"', 1, true) ~= nil or lua:find("%." .. name .. "%s*=") ~= nil
end

---------------------------------------------------------------------------

local LABEL = {
  dl = "dl.%s", Array = "Array:%s", Error = "Error:%s", Capsule = "Capsule:%s",
  ["Array."] = "Array.%s (attribute)", ["Error."] = "Error.%s (field)",
  ["Capsule."] = "Capsule.%s (field)", ["dl.E"] = "dl.E.%s (error code: a @field of E)",
}
local ORDER = { "dl", "dl.E", "Array", "Array.", "Error", "Error.", "Capsule", "Capsule." }
for _, module in ipairs(sorted_keys(SUBMODULES)) do
  local sub = SUBMODULES[module]
  LABEL[sub.namespace] = sub.namespace .. ".%s"
  ORDER[#ORDER + 1] = sub.namespace
  for _, class in ipairs(sorted_keys(sub.types)) do
    LABEL[class] = class .. ":%s"
    ORDER[#ORDER + 1] = class
  end
end

local facts = ldoc_facts()
local doc = documented_names(facts)
local api, dl, array, capsule = public_names()

local undocumented, stale, count = {}, {}, 0
for _, ns in ipairs(ORDER) do
  for _, name in ipairs(sorted_keys(api[ns])) do
    count = count + 1
    if not doc[ns][name] then undocumented[#undocumented + 1] = LABEL[ns]:format(name) end
  end
  for _, name in ipairs(sorted_keys(doc[ns])) do
    local exists = api[ns][name] or (ns:sub(-1) == "." and field_exists(ns, name, array, capsule))
    if not exists then
      stale[#stale + 1] = LABEL[ns]:format(name) .. "  <- " .. doc[ns][name]
    end
  end
end

print(string.format("dlbridge %s: %d public names checked against docs/api/*.luadoc", dl.version,
                    count))
if #undocumented > 0 then
  print("\nUndocumented (add an entry to docs/api/*.luadoc, or an @aliases/@method/@operator " ..
        "line to the entry it belongs to):")
  for _, line in ipairs(undocumented) do print("  " .. line) end
end
if #stale > 0 then
  print("\nDocumented but not in the API (remove or rename the entry):")
  for _, line in ipairs(stale) do print("  " .. line) end
end
if #failures > 0 then
  print("\nOther problems:")
  for _, line in ipairs(failures) do print("  " .. line) end
end
if #undocumented + #stale + #failures > 0 then os.exit(1) end
print("every public name is documented")
