-- limit_set(key, log, now, v, reason) changes the learned limit in HASH
-- key (proxies/limit.go) to v kept within its min and max, logs the
-- change ("at|value|reason", newest first, in LIST log, capped at 500)
-- and bumps its gen. A pinned limit does not move. Returns the value the
-- limit has after the call and whether it changed.
local function limit_set(key, log, now, v, reason)
  local c = redis.call('HMGET', key, 'value', 'min', 'max', 'pinned')
  local cur = tonumber(c[1])
  if c[4] == '1' then return cur, false end
  v = math.floor(math.max(tonumber(c[2]), math.min(tonumber(c[3]), v)))
  if v == cur then return cur, false end
  redis.call('HSET', key, 'value', v, 'at', now, 'reason', reason)
  redis.call('HINCRBY', key, 'gen', 1)
  redis.call('LPUSH', log, now .. '|' .. v .. '|' .. reason)
  redis.call('LTRIM', log, 0, 499)
  return v, true
end
