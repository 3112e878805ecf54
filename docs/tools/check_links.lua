-- check_links.lua -- every relative link in the given Markdown files names a
-- file or folder inside the repository (a clone has nothing outside it):
--   lua5.4 docs/tools/check_links.lua README.md docs/design.md
-- Run from the repository root. Links with a scheme (https:, mailto:) and
-- in-page anchors (#...) are not checked; code spans and fenced blocks are
-- skipped.
local failures = 0

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return os.rename(path, path) ~= nil -- a directory
end

-- The link targets of one line outside code: [text](target).
local function targets(line)
  line = line:gsub("`[^`]*`", "")
  local list = {}
  for target in line:gmatch("%]%(([^)%s]+)%)") do list[#list + 1] = target end
  return list
end

for _, file in ipairs(arg) do
  local dir = file:match("^(.*)/[^/]*$") or "."
  local fenced = false
  local n = 0
  for line in io.lines(file) do
    n = n + 1
    if line:match("^%s*```") then fenced = not fenced
    elseif not fenced then
      for _, target in ipairs(targets(line)) do
        if not target:match("^%a[%w+.-]*:") and not target:match("^#") then
          local path = target:gsub("#.*$", "")
          local resolved = dir == "." and path or dir .. "/" .. path
          local outside = resolved:match("^%.%./") or resolved:match("/%.%./%.%./")
                          or path:match("^/")
          if outside or not exists(resolved) then
            print(string.format("%s:%d: link to %s %s", file, n, target,
                                outside and "leaves the repository" or "names no file"))
            failures = failures + 1
          end
        end
      end
    end
  end
end
if failures > 0 then
  print(failures .. " broken link(s)")
  os.exit(1)
end
print("links: every relative link names a file in the repository")
