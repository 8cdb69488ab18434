-- exit_release: end a hold of an exit IP; the IP is ready for the site
-- again min_interval after now (I2 on the IP). Ready-ats that ended a
-- minute ago are pruned.
--
-- KEYS[1]  holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[2]  ready ZSET (site): ip -> ready-at ms
-- ARGV[1]  skew ms
-- ARGV[2]  ip
-- ARGV[3]  token
-- ARGV[4]  min_interval ms
--
-- Returns {1}, or {0} when the token is not the live hold's.
--
-- lib: now

local now = redis_now(ARGV[1])
local ip = ARGV[2]
local cur = redis.call('HGET', KEYS[1], ip)
if not cur or string.match(cur, '^(%d+)|') ~= ARGV[3] then return {0} end
redis.call('HDEL', KEYS[1], ip)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 60000)
redis.call('ZADD', KEYS[2], 'GT', now + ARGV[4], ip)
return {1}
