-- extend: push a live lease's expiry to now+ttl (and its proxy's ready-at
-- to that plus min_interval).
--
-- KEYS[1]  ready ZSET (site, class)
-- KEYS[2]  leases HASH (site)
-- KEYS[3]  busy HASH
-- ARGV[1]  skew ms
-- ARGV[2]  proxy id
-- ARGV[3]  token
-- ARGV[4]  ttl ms
-- ARGV[5]  min_interval ms
-- ARGV[6]  site
--
-- Returns {1, now, expiry} or {0} when the token is stale.
--
-- lib: now

local now = redis_now(ARGV[1])
local id, tok = ARGV[2], ARGV[3]
local cur = redis.call('HGET', KEYS[2], id)
if not cur then return {0} end
local ctok, rest = string.match(cur, '^(%d+)|%d+|(.*)$')
if ctok ~= tok then return {0} end
local exp = now + ARGV[4]
redis.call('HSET', KEYS[2], id, tok .. '|' .. exp .. '|' .. rest)
redis.call('ZADD', KEYS[1], 'XX', exp + ARGV[5], id)
local b = redis.call('HGET', KEYS[3], id)
if b and string.match(b, '^%d+') == tok then redis.call('HSET', KEYS[3], id, tok .. '|' .. exp .. '|' .. ARGV[6]) end
return {1, now, exp}
