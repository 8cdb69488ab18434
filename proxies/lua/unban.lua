-- unban: end the quarantine of proxies (all quarantined ones when no id
-- is given) on every listed site and class: ready at once.
--
-- KEYS[3i-2]  ready ZSET of one (site, class)
-- KEYS[3i-1]  its quarantine ZSET
-- KEYS[3i]    its site's stats HASH
-- ARGV[1]     skew ms
-- ARGV[2..]   proxy ids (none: all quarantined ones)
--
-- Returns how many (proxy, site) quarantines ended.
--
-- lib: now

local now = redis_now(ARGV[1])
local n = 0
for k = 1, #KEYS, 3 do
  local ids = {}
  if #ARGV > 1 then
    for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
  else
    ids = redis.call('ZRANGEBYSCORE', KEYS[k + 1], '(' .. now, '+inf')
  end
  for _, id in ipairs(ids) do
    local q = tonumber(redis.call('ZSCORE', KEYS[k + 1], id) or '0')
    redis.call('ZREM', KEYS[k + 1], id)
    redis.call('HDEL', KEYS[k + 2], id .. '|streak')
    if q > now then
      redis.call('ZADD', KEYS[k], 'XX', now, id)
      n = n + 1
    end
  end
end
return n
