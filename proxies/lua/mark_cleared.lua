-- mark_cleared: mark a proxy of the pool cleared on the site's clock, drop
-- the marks that have ended, and keep the set no longer than its last
-- mark. A proxy not in the pool is not marked.
--
-- KEYS[1]  cleared ZSET (site)
-- KEYS[2]  proxies HASH
-- ARGV[1]  skew ms
-- ARGV[2]  ttl ms
-- ARGV[3]  proxy id
--
-- Returns 1, or 0 for a proxy not in the pool.
--
-- lib: now

local now = redis_now(ARGV[1])
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ARGV[2], ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
