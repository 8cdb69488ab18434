-- volume_record(limit, log, limits, name, now) creates the learned limit
-- of a site's volume budget per exit IP (volume:<site>, in requests;
-- proxies/modem_limit.go) unless it exists: value 0, none learned yet.
local function volume_record(limit, log, limits, name, now)
  if redis.call('EXISTS', limit) == 1 then return end
  redis.call('SADD', limits, name)
  redis.call('HSET', limit, 'value', 0, 'min', 0, 'max', 1000000, 'unit', 'requests',
    'pinned', '0', 'at', now, 'reason', 'start: none learned', 'gen', 1)
  redis.call('LPUSH', log, now .. '|0|start: none learned')
end
