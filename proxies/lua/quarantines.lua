-- quarantines: the proxies quarantined now on every known set, with when
-- each quarantine ends, for the fallback's snapshot: O(log N + the
-- quarantined) per set. It only reads.
--
-- KEYS[1]  known HASH: the quarantine ZSET of every set it lists
--          (lua/lib/sets.lua) is read
-- ARGV[1]  skew ms
--
-- Returns {site, proxy id, end ms, site, proxy id, end ms, …}.
--
-- lib: now sets

local now = redis_now(ARGV[1])
local out = {}
for _, s in ipairs(known_sets(KEYS[1])) do
  local q = redis.call('ZRANGEBYSCORE', s.quarantine, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #q, 2 do
    out[#out + 1] = s.site
    out[#out + 1] = q[i]
    out[#out + 1] = q[i + 1]
  end
end
return out
