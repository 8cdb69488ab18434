-- rotate_extend: push a live rotation's deadline (and the modem's
-- ready-at in every set) to now+ttl; a rotator that dies stops pushing,
-- and the modem is leased again at most ttl later.
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  known HASH: the ready ZSET of every set it lists
--          (lua/lib/sets.lua) is pushed
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  rotation token
-- ARGV[4]  ttl ms
--
-- Returns {1, deadline} | {-1} the rotation is not live.
--
-- lib: now sets

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if not r then return {-1} end
local tok, dl, rest = string.match(r, '^(%d+)|(%d+)|(.*)$')
if tok ~= ARGV[3] or tonumber(dl) <= now then return {-1} end
dl = now + ARGV[4]
redis.call('HSET', KEYS[1], id, tok .. '|' .. dl .. '|' .. rest)
for _, s in ipairs(known_sets(KEYS[2])) do redis.call('ZADD', s.ready, 'XX', 'GT', dl, id) end
return {1, dl}
