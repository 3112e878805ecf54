--- ldoc_items: an LDoc filter that prints what LDoc parsed, for
-- check_lua_docs.lua: `ldoc --filter ldoc_items.dump -c config.ld .`
-- (with docs/tools on LUA_PATH). One tab-separated line per fact:
--   ITEM <module> <type> <name>          a documented item
--   TAG  <module> <name> <tag> <value>   one value of a tag the checker reads
--   FIELD <module> <name> <field>        a @field of a documented table
-- LDoc's own messages go to the same output; the checker keeps only these.

local M = {}

-- The tags whose values name more public functions (see check_lua_docs.lua),
-- and the example every function entry needs.
-- (LDoc moves @usage out of the tags, into item.usage.)
local READ_TAGS = { "aliases", "method", "operator", "usage" }

local function clean(s)
  return (tostring(s):gsub("[\t\n]", " "))
end

function M.dump(module_list)
  for _, mod in ipairs(module_list) do
    for _, item in ipairs(mod.items) do
      print(table.concat({ "ITEM", mod.name, item.type, item.name }, "\t"))
      for _, tag in ipairs(READ_TAGS) do
        local values = item.tags[tag] or item[tag]
        if type(values) == "string" then values = { values } end
        for _, value in ipairs(values or {}) do
          print(table.concat({ "TAG", mod.name, item.name, tag, clean(value) }, "\t"))
        end
      end
      if item.type == "table" and item.params then
        for _, field in ipairs(item.params) do
          print(table.concat({ "FIELD", mod.name, item.name, clean(field) }, "\t"))
        end
      end
    end
  end
end

return M
