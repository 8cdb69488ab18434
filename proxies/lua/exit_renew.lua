-- exit_renew: push the expiry of a live hold of an exit IP (exit_hold.lua)
-- to now+ttl, if its token is the live one.
--
-- KEYS[1]  holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[2]  ready ZSET (site): ip -> ready-at ms
-- ARGV[1]  skew ms
-- ARGV[2]  ip
-- ARGV[3]  token of the hold
-- ARGV[4]  ttl ms
--
-- Returns {1, token, now, expiry, not-before} | {-1} the hold is not
-- live.
--
-- lib: now

local now = redis_now(ARGV[1])
local ip, tok = ARGV[2], ARGV[3]
local cur = redis.call('HGET', KEYS[1], ip)
if not cur or string.match(cur, '^(%d+)|') ~= tok then return {-1} end
local ready = tonumber(redis.call('ZSCORE', KEYS[2], ip) or '0')
local holder = string.match(cur, '^%d+|%d+|(.*)$')
local exp = now + ARGV[4]
redis.call('HSET', KEYS[1], ip, tok .. '|' .. exp .. '|' .. holder)
return {1, tonumber(tok), now, exp, math.max(ready, now)}
