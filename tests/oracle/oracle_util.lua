-- oracle_util.lua -- what the oracle checkers (check.lua, compute_check.lua)
-- share: the hex encoding of element bytes and shapes in the case lines that
-- cases.py and compute_cases.py print.
local util = {}

-- The bytes of a hex string ("-" is none).
function util.unhex(h)
  if h == "-" then return "" end
  return (h:gsub("..", function(byte) return string.char(tonumber(byte, 16)) end))
end

-- A string's bytes as hex.
function util.hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- A shape written "2x3" (or "-" for 0-d) as a table of integers.
function util.parse_shape(text)
  local shape = {}
  if text ~= "-" then
    for n in text:gmatch("%d+") do shape[#shape + 1] = tonumber(n) end
  end
  return shape
end

return util
