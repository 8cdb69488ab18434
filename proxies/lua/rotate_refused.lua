-- rotate_refused: the change link refused the call rotate_change.lua
-- allowed (429: too soon). The refused call changed nothing, so the
-- modem's record goes back to the change before it (unless another
-- moved it since). With Retry-After the refusal tells the provider's
-- real interval: at least the time since that change plus Retry-After.
-- Where that is longer than the interval in use (the modem's
-- change_every, or what was learned before) and within the bound, it is
-- learned: the provider's learned limit (change:<provider>, created at
-- the modem's change_every, bounded by it and ARGV[8]) is set to it
-- through limit_set, for every modem and worker of the cluster; a
-- pinned one is kept. The estimate errs long: Retry-After is rounded up
-- to whole seconds and now is after the provider answered.
--
-- KEYS[1]  changes HASH: id -> ms of the last accepted change
-- KEYS[2]  limit HASH change:<provider>
-- KEYS[3]  its log LIST
-- KEYS[4]  limits SET: every learned limit's name
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  the permission's record ms (rotate_change.lua's now)
-- ARGV[4]  the record before it, ms (0: none)
-- ARGV[5]  Retry-After ms (-1: the answer gave none)
-- ARGV[6]  the modem's change_every ms
-- ARGV[7]  the limit's name, change:<provider>
-- ARGV[8]  the most ms an interval may be learned at
--
-- Returns {interval ms now in use, 1 if learned now | 0, now}.
--
-- lib: now limit changelimit

local now = redis_now(ARGV[1])
local id, prev, ra = ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5])
if redis.call('HGET', KEYS[1], id) == ARGV[3] then
  if prev > 0 then redis.call('HSET', KEYS[1], id, prev) else redis.call('HDEL', KEYS[1], id) end
end
local cur = change_every(KEYS[2], ARGV[6])
if ra < 0 or prev == 0 then return {cur, 0, now} end
local seen = now - prev + ra
if seen <= cur or seen > tonumber(ARGV[8]) then return {cur, 0, now} end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SADD', KEYS[4], ARGV[7])
  redis.call('HSET', KEYS[2], 'value', ARGV[6], 'min', ARGV[6], 'max', ARGV[8], 'unit', 'ms',
    'pinned', '0', 'at', now, 'reason', 'start', 'gen', 1)
  redis.call('LPUSH', KEYS[3], now .. '|' .. ARGV[6] .. '|start')
end
local why = string.format('429 Retry-After %ds, %.1fs after the last change', math.floor(ra / 1000), (now - prev) / 1000)
local _, moved = limit_set(KEYS[2], KEYS[3], now, seen, why)
return {change_every(KEYS[2], ARGV[6]), moved and 1 or 0, now}
