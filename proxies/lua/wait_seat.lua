-- wait_seat: whether one more job may wait in its worker slot for a
-- proxy of (site, class): the cluster's live leases of the class on the
-- site plus the jobs already waiting in their slots stay within the
-- proxies of the class not quarantined for the site, the most jobs the
-- site can serve at once. A job refused hands its slot back at once. A
-- seat is kept until its waiter gives it back (ARGV[3] = 0) or its
-- deadline passes (a waiter that died). Counting the leases is one HGETALL
-- of the site's leases: it runs only when no proxy was ready.
--
-- KEYS[1]  seats ZSET (site, class): waiter -> deadline ms
-- KEYS[2]  ready ZSET (site, class)
-- KEYS[3]  quarantine ZSET (site, class)
-- KEYS[4]  leases HASH (site)
-- ARGV[1]  skew ms
-- ARGV[2]  waiter (holder|task)
-- ARGV[3]  how long the seat is kept at most (ms); 0: give it back
--
-- Returns {1 seated | 0 refused, usable proxies, live leases, waiting}
-- (waiting before this one; {1, 0, 0, 0} when giving back).
--
-- lib: now

local now = redis_now(ARGV[1])
if tonumber(ARGV[3]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return {1, 0, 0, 0}
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local usable = redis.call('ZCOUNT', KEYS[2], '(-inf', '+inf') - redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
local leases = 0
local all = redis.call('HGETALL', KEYS[4])
for i = 1, #all, 2 do
  local exp = tonumber(string.match(all[i + 1], '^%d+|(%d+)|'))
  if exp and exp > now and redis.call('ZSCORE', KEYS[2], all[i]) then leases = leases + 1 end
end
local waiting = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then waiting = waiting - 1 end
if leases + waiting >= usable then return {0, usable, leases, waiting} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 60000)
return {1, usable, leases, waiting}
