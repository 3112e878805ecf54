--- ldoc_markdown: the small Markdown subset the reference's doc comments use,
-- as an LDoc formatter (config.ld: `format = "ldoc_markdown"`).
--
-- Debian's lua-ldoc drops LDoc's bundled markdown.lua, and the Markdown
-- modules Debian packages (lua-markdown, lua-discount) exist for Lua 5.1/5.2
-- only; the reference is built under lua5.4, so it brings its own renderer.
-- What it understands, and all the doc comments under docs/api may use:
--   * paragraphs, separated by blank lines;
--   * bullet lists: lines starting with "- " (continuation lines indented);
--   * `code` (LDoc itself turns it into <code> or a link before this runs),
--     **bold**;
--   * everything else is text: &, < and > are escaped, except the <a> and
--     <code> tags LDoc has already put in.
-- Returns a function(text) -> html, as LDoc expects of a formatter module.

-- Escapes &, < and > outside the tags LDoc generates (<a href="...">, </a>,
-- <code>, </code>) and outside character entities.
local function escape_text(s)
  local out, pos = {}, 1
  while pos <= #s do
    local tag_start, tag_end = s:find("</?a[^>]*>", pos)
    local code_start, code_end = s:find("</?code>", pos)
    if code_start and (not tag_start or code_start < tag_start) then
      tag_start, tag_end = code_start, code_end
    end
    local plain = s:sub(pos, tag_start and tag_start - 1 or #s)
    plain = plain:gsub("&(#?%w*;?)", function(rest)
      if rest:match("^#?%w+;$") then return "&" .. rest end
      return "&amp;" .. rest
    end)
    plain = plain:gsub("<", "&lt;"):gsub(">", "&gt;")
    out[#out + 1] = plain
    if not tag_start then break end
    out[#out + 1] = s:sub(tag_start, tag_end)
    pos = tag_end + 1
  end
  return table.concat(out)
end

-- Inline markup of one run of text.
local function inline(s)
  s = escape_text(s)
  return (s:gsub("%*%*(.-)%*%*", "<strong>%1</strong>"))
end

-- Splits text into blocks (lists of lines) at blank lines.
local function blocks_of(text)
  local blocks, current = {}, {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    if line:match("^%s*$") then
      if #current > 0 then blocks[#blocks + 1], current = current, {} end
    else
      current[#current + 1] = line
    end
  end
  if #current > 0 then blocks[#blocks + 1] = current end
  return blocks
end

-- Lines whose first starts a bullet: one <ul>, an <li> per bullet.
local function render_list(lines)
  local items = {}
  for _, line in ipairs(lines) do
    local bullet = line:match("^%s*[-*]%s+(.*)$")
    if bullet then
      items[#items + 1] = bullet
    else
      items[#items] = items[#items] .. " " .. line:match("^%s*(.-)%s*$")
    end
  end
  for k, item in ipairs(items) do items[k] = "<li>" .. inline(item) .. "</li>" end
  return "<ul>\n" .. table.concat(items, "\n") .. "\n</ul>"
end

return function(text)
  local html = {}
  for _, lines in ipairs(blocks_of(text)) do
    -- A lead-in paragraph may run straight into a list ("Options:\n- dim ...").
    local first_bullet
    for k, line in ipairs(lines) do
      if line:match("^%s*[-*]%s") then first_bullet = k break end
    end
    local lead = table.concat(lines, "\n", 1, (first_bullet or #lines + 1) - 1)
    if lead ~= "" then html[#html + 1] = "<p>" .. inline(lead) .. "</p>" end
    if first_bullet then html[#html + 1] = render_list(table.move(lines, first_bullet, #lines, 1, {})) end
  end
  return table.concat(html, "\n")
end
