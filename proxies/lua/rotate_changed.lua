-- rotate_changed: the change link answered that it changed the modem's
-- IP. The provider counts its interval from when it took the call, which
-- is later than rotate_change.lua's record (made before the call was
-- sent), so the record moves to now, rounded up to the next millisecond
-- (the clock reads whole milliseconds; the provider's may read finer):
-- the next change waits the interval from a moment no earlier than the
-- provider's. A rotation no longer
-- live records it all the same (the change was made); the record only
-- ever moves later.
--
-- KEYS[1]  changes HASH: id -> ms of the last accepted change
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
--
-- Returns {now}.
--
-- lib: now

local now = redis_now(ARGV[1]) + 1
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[2]) or '0')
if now > last then redis.call('HSET', KEYS[1], ARGV[2], now) end
return {now}
