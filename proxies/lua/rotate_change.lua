-- rotate_change: the rotator may call the change link now. It may when
-- its rotation is live, the provider's least interval since the modem's
-- last accepted change has passed (cluster-wide), and no session holds a
-- live lease of the modem on any site (every open connection drops at
-- the change). The change is recorded as made now.
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  changes HASH: id -> ms of the last accepted change
-- KEYS[3]  known HASH: the leases HASH of every site it lists
--          (lua/lib/sets.lua) is looked at
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  rotation token
-- ARGV[4]  the provider's least ms between two changes
--
-- Returns {1, now} | {0, 'interval', until, now} | {0, 'leased', until,
-- now} | {-1} the rotation is not live.
--
-- lib: now sets

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if not r then return {-1} end
local tok, dl = string.match(r, '^(%d+)|(%d+)|')
if tok ~= ARGV[3] or tonumber(dl) <= now then return {-1} end
local next = tonumber(redis.call('HGET', KEYS[2], id) or '0') + ARGV[4]
if next > now then return {0, 'interval', next, now} end
local _, sites = known_sets(KEYS[3])
for _, s in ipairs(sites) do
  local l = redis.call('HGET', s.leases, id)
  if l then
    local exp = tonumber(string.match(l, '^%d+|(%d+)|'))
    if exp > now then return {0, 'leased', exp, now} end
  end
end
redis.call('HSET', KEYS[2], id, now)
return {1, now}
