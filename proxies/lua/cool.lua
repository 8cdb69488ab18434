-- cool: keep a proxy from being leased on a (site, class) for ms from now,
-- unless its ready-at is later already: the fallback's return ends a
-- local lease the broker would not register, whose requests the broker's
-- pacing never saw (I2 across the return). Now is rounded up as in
-- release.lua.
--
-- KEYS[1]  ready ZSET (site, class)
-- ARGV[1]  skew ms
-- ARGV[2]  proxy id
-- ARGV[3]  ms
--
-- Returns {ready-at}, or {} when the proxy is not in the set.
--
-- lib: now

local now = redis_now(ARGV[1])
redis.call('ZADD', KEYS[1], 'XX', 'GT', now + 1 + ARGV[3], ARGV[2])
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s then return {} end
return {tonumber(s)}
