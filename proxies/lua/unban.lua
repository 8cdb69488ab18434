-- unban: end the quarantine of proxies (all quarantined ones when no id
-- is given) on every known site and class: ready at once.
--
-- KEYS[1]  known HASH: its sets (lua/lib/sets.lua) are the ones unbanned
--          on, each with its ready and quarantine ZSET and its site's
--          stats HASH
-- ARGV[1]  skew ms
-- ARGV[2..] proxy ids (none: all quarantined ones)
--
-- Returns how many (proxy, site) quarantines ended.
--
-- lib: now sets

local now = redis_now(ARGV[1])
local n = 0
for _, s in ipairs(known_sets(KEYS[1])) do
  local ids = {}
  if #ARGV > 1 then
    for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
  else
    ids = redis.call('ZRANGEBYSCORE', s.quarantine, '(' .. now, '+inf')
  end
  for _, id in ipairs(ids) do
    local q = tonumber(redis.call('ZSCORE', s.quarantine, id) or '0')
    redis.call('ZREM', s.quarantine, id)
    redis.call('HDEL', s.stats, id .. '|streak')
    if q > now then
      redis.call('ZADD', s.ready, 'XX', now, id)
      n = n + 1
    end
  end
end
return n
