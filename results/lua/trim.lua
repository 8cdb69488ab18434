-- trim: trim the stream to the group's oldest unacknowledged entry: its
-- oldest pending one or, with none pending, the first after the last
-- delivered. Atomic, so an entry delivered meanwhile is never cut.
--
-- KEYS[1]  the stream
-- ARGV[1]  the group
--
-- Returns the number of entries removed, or -1 without the group.
--
-- lib: group

local g = group_of(KEYS[1], ARGV[1])
if not g then return -1 end
local p = redis.call('XPENDING', KEYS[1], ARGV[1])
local min
if p[1] > 0 then
  min = p[2]
else
  local ms, seq = string.match(g['last-delivered-id'], '^(%d+)-(%d+)$')
  min = ms .. '-' .. string.format('%d', tonumber(seq) + 1)
end
return redis.call('XTRIM', KEYS[1], 'MINID', '~', min)
