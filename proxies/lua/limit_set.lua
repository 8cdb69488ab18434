-- limit_set: change, pin or unpin a learned limit from Go (SetLimit,
-- PinLimit, UnpinLimit). A set is fenced by the gen it was computed
-- from; a pinned limit is not set (no error: a user's value stands).
--
-- KEYS[1]  limit HASH (name)
-- KEYS[2]  limit log LIST (name)
-- ARGV[1]  skew ms
-- ARGV[2]  op: set, pin or unpin
-- ARGV[3]  gen the set was computed from (set only)
-- ARGV[4]  value (set and pin)
-- ARGV[5]  reason
--
-- Returns {1, gen} | {0, gen} stale (nothing changed) | {-1} no such
-- limit.
--
-- lib: now limit

local now = redis_now(ARGV[1])
local gen = redis.call('HGET', KEYS[1], 'gen')
if not gen then return {-1} end
local op = ARGV[2]
if op == 'set' then
  if gen ~= ARGV[3] then return {0, tonumber(gen)} end
  limit_set(KEYS[1], KEYS[2], now, tonumber(ARGV[4]), ARGV[5])
elseif op == 'pin' then
  redis.call('HSET', KEYS[1], 'pinned', '0')
  local v, moved = limit_set(KEYS[1], KEYS[2], now, tonumber(ARGV[4]), ARGV[5])
  if not moved then redis.call('LPUSH', KEYS[2], now .. '|' .. v .. '|' .. ARGV[5]) end
  redis.call('HSET', KEYS[1], 'pinned', '1', 'at', now, 'reason', ARGV[5])
else
  redis.call('HSET', KEYS[1], 'pinned', '0', 'at', now, 'reason', ARGV[5])
  redis.call('LPUSH', KEYS[2], now .. '|' .. redis.call('HGET', KEYS[1], 'value') .. '|' .. ARGV[5])
end
return {1, tonumber(redis.call('HGET', KEYS[1], 'gen'))}
