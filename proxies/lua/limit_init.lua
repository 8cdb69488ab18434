-- limit_init: create a learned limit at its start value unless it exists;
-- set its bounds and unit (a value now outside them moves inside).
--
-- KEYS[1]  limit HASH (name)
-- KEYS[2]  limit log LIST (name)
-- KEYS[3]  limits SET: every learned limit's name
-- ARGV[1]  skew ms
-- ARGV[2]  name
-- ARGV[3]  start value
-- ARGV[4]  min
-- ARGV[5]  max
-- ARGV[6]  unit
--
-- Returns {value}.
--
-- lib: now limit

local now = redis_now(ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'value', ARGV[3], 'min', ARGV[4], 'max', ARGV[5], 'unit', ARGV[6],
    'pinned', '0', 'at', now, 'reason', 'start', 'gen', 1)
  redis.call('LPUSH', KEYS[2], now .. '|' .. ARGV[3] .. '|start')
  return {tonumber(ARGV[3])}
end
redis.call('HSET', KEYS[1], 'min', ARGV[4], 'max', ARGV[5], 'unit', ARGV[6])
local v = tonumber(redis.call('HGET', KEYS[1], 'value'))
local pinned = redis.call('HGET', KEYS[1], 'pinned')
if pinned ~= '1' and (v < tonumber(ARGV[4]) or v > tonumber(ARGV[5])) then
  v = limit_set(KEYS[1], KEYS[2], now, v, 'bounds')
end
return {v}
