-- rotate_begin: a modem's live lease becomes its rotation. The lease ends
-- (its token fences the start: exactly one holder in the cluster can
-- start it) and the modem is marked rotating until a deadline the rotator
-- keeps pushing (rotate_extend.lua): no set leases it before then, so no
-- request is sent through it while it changes IP. A live rotation of the
-- modem already there is left alone.
--
-- KEYS[1]  leases HASH (site) of the lease
-- KEYS[2]  busy HASH
-- KEYS[3]  rotating HASH: id -> "token|deadline-ms|holder|start-ms|site"
-- KEYS[4]  token counter
-- KEYS[5]  changes HASH: id -> ms of the modem's last accepted change
-- KEYS[6]  ready ZSET of the lease's (site, class): the lease ended, so
--          the modem is ready there at the deadline
-- KEYS[7]  known HASH: the ready ZSET of every other set it lists
--          (lua/lib/sets.lua) is pushed to the deadline unless later (a
--          live lease's)
-- KEYS[8]  limit HASH of the modem's provider's learned interval
--          (change:<provider>)
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  lease token
-- ARGV[4]  holder
-- ARGV[5]  ttl ms of the mark
-- ARGV[6]  the modem's change_every ms
-- ARGV[7]  site
-- ARGV[8]  the margin ms kept over the interval
--
-- Returns {1, token, now, deadline, not-before ms (the next change the
-- provider allows, with the margin)} | {0, deadline of the live
-- rotation} | {-1} the lease is not live.
--
-- lib: now sets changelimit

local now = redis_now(ARGV[1])
local id, tok = ARGV[2], ARGV[3]
local cur = redis.call('HGET', KEYS[1], id)
if not cur or string.sub(cur, 1, #tok + 1) ~= tok .. '|' then return {-1} end
if tonumber(string.match(cur, '^%d+|(%d+)|')) <= now then return {-1} end
redis.call('HDEL', KEYS[1], id)
local b = redis.call('HGET', KEYS[2], id)
if b and string.match(b, '^%d+') == tok then redis.call('HDEL', KEYS[2], id) end
local r = redis.call('HGET', KEYS[3], id)
if r then
  local dl = tonumber(string.match(r, '^%d+|(%d+)|'))
  if dl > now then return {0, dl} end
end
local rt = redis.call('INCR', KEYS[4])
local dl = now + ARGV[5]
redis.call('HSET', KEYS[3], id, rt .. '|' .. dl .. '|' .. ARGV[4] .. '|' .. now .. '|' .. ARGV[7])
redis.call('ZADD', KEYS[6], 'XX', dl, id)
for _, s in ipairs(known_sets(KEYS[7])) do
  if s.ready ~= KEYS[6] then redis.call('ZADD', s.ready, 'XX', 'GT', dl, id) end
end
local last = tonumber(redis.call('HGET', KEYS[5], id) or '0')
if last == 0 then return {1, rt, now, dl, now} end
return {1, rt, now, dl, math.max(now, last + change_every(KEYS[8], ARGV[6]) + ARGV[8])}
