-- remove_idle: remove the group's consumers that have been idle at least
-- ARGV[2] ms and hold no pending entry, in one script, so no entry is
-- delivered to one between the look and the removal (removing a consumer
-- drops its pending entries from the group).
--
-- KEYS[1]  the stream
-- ARGV[1]  the group
-- ARGV[2]  the idle time in ms
--
-- Returns the names of the consumers removed.
--
-- lib: group

if not group_of(KEYS[1], ARGV[1]) then return {} end
local gone = {}
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i+1] end
  if f['pending'] == 0 and f['idle'] >= tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    gone[#gone+1] = f['name']
  end
end
return gone
