-- wait_turn: the next turn of a job waiting for a (site, class) that has
-- no proxy ready. Waiters are spaced by min_interval / the class's
-- proxies not quarantined for the site, so they come
-- back about as fast as the pool can serve them, in the order they came.
-- A turn is a hint: the job leases as usual when it comes back.
--
-- KEYS[1]  the line: HASH next (its next free turn, ms), spacing (ms)
-- KEYS[2]  ready ZSET (site, class)
-- KEYS[3]  quarantine ZSET (site, class)
-- ARGV[1]  skew ms
-- ARGV[2]  the broker's next-ready time for the class (ms), 0 for none
-- ARGV[3]  1 when some proxies of the site are leased (they may come
--          free before ARGV[2])
-- ARGV[4]  the site's min_interval (ms)
--
-- Returns {turn ms, now ms, proxies counted}.
--
-- lib: now

local now = redis_now(ARGV[1])
local n = redis.call('ZCOUNT', KEYS[2], '(-inf', '+inf') - redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
if n < 1 then n = 1 end
local spacing = math.max(1, math.floor(tonumber(ARGV[4]) / n))
local est = tonumber(ARGV[2])
if est < now then est = now end
if tonumber(ARGV[3]) == 1 and est > now + spacing then est = now + spacing end
local turn = math.max(tonumber(redis.call('HGET', KEYS[1], 'next') or 0), est)
redis.call('HSET', KEYS[1], 'next', turn + spacing, 'spacing', spacing)
redis.call('PEXPIRE', KEYS[1], turn + spacing - now + 60000)
return {turn, now, n}
