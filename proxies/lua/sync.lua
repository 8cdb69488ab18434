-- sync: make one ready set hold exactly the eligible proxies, if the pool
-- version is still the one they were computed from, and mark it fresh
-- (sync marker "#<version>" at score -inf, known field). New proxies are
-- ready at once (score 0).
--
-- KEYS[1]  ready ZSET (site, class)
-- KEYS[2]  known HASH
-- KEYS[3]  version
-- KEYS[4]  quarantine ZSET (site, class)
-- ARGV[1]  version read ("" for none)
-- ARGV[2]  known field
-- ARGV[3..] eligible proxy ids
--
-- Returns 1, or 0 when the version moved (read again and retry).

local v = redis.call('GET', KEYS[3]) or ''
if v ~= ARGV[1] then return 0 end
-- a set synced before any import is fresh too (the lease script takes ""
-- for out of date)
if v == '' then v = '0' end
local want = {}
for i = 3, #ARGV do want[ARGV[i]] = true end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if want[id] then want[id] = false else
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[4], id)
  end
end
for id, add in pairs(want) do
  if add then redis.call('ZADD', KEYS[1], 0, id) end
end
redis.call('ZADD', KEYS[1], '-inf', '#' .. v)
redis.call('HSET', KEYS[2], ARGV[2], v)
return 1
