-- exit_ban: quarantine an exit IP for a site (I5 on the IP the site
-- sees): every session that lands on it, through any endpoint, is refused
-- its hold until the end. A longer quarantine already there stays. The
-- hold of the token, if live, ends. Ended quarantines are pruned.
--
-- KEYS[1]  holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[2]  quarantine ZSET (site): ip -> end ms
-- ARGV[1]  skew ms
-- ARGV[2]  ip
-- ARGV[3]  token of the hold that saw the ban, 0 for none
-- ARGV[4]  quarantine ms
--
-- Returns {the quarantine's end ms}.
--
-- lib: now

local now = redis_now(ARGV[1])
local ip = ARGV[2]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], 'GT', now + ARGV[4], ip)
local cur = redis.call('HGET', KEYS[1], ip)
if cur and string.match(cur, '^(%d+)|') == ARGV[3] then redis.call('HDEL', KEYS[1], ip) end
return {tonumber(redis.call('ZSCORE', KEYS[2], ip))}
