-- rotate_change: the rotator may call the change link now. It may when
-- its rotation is live, the provider's least interval plus the margin
-- (ARGV[5]) since the modem's last accepted change has passed
-- (cluster-wide), and no session holds a live lease of the modem on any
-- site (every open connection drops at the change). The interval is the
-- modem's change_every, or the provider's learned from its refusals
-- where longer (lib/changelimit.lua). The change is recorded as made
-- now; the record it replaces is returned, so a refused call can put it
-- back (rotate_refused.lua).
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  changes HASH: id -> ms of the last accepted change
-- KEYS[3]  known HASH: the leases HASH of every site it lists
--          (lua/lib/sets.lua) is looked at
-- KEYS[4]  limit HASH of the modem's provider's learned interval
--          (change:<provider>)
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  rotation token
-- ARGV[4]  the modem's change_every ms
-- ARGV[5]  the margin ms kept over the interval
--
-- Returns {1, now, the previous record ms (0: none)} | {0, 'interval',
-- until, now} | {0, 'leased', until, now} | {-1} the rotation is not
-- live.
--
-- lib: now sets changelimit

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if not r then return {-1} end
local tok, dl = string.match(r, '^(%d+)|(%d+)|')
if tok ~= ARGV[3] or tonumber(dl) <= now then return {-1} end
local last = tonumber(redis.call('HGET', KEYS[2], id) or '0')
local next = last + change_every(KEYS[4], ARGV[4]) + ARGV[5]
if last > 0 and next > now then return {0, 'interval', next, now} end
local _, sites = known_sets(KEYS[3])
for _, s in ipairs(sites) do
  local l = redis.call('HGET', s.leases, id)
  if l then
    local exp = tonumber(string.match(l, '^%d+|(%d+)|'))
    if exp > now then return {0, 'leased', exp, now} end
  end
end
redis.call('HSET', KEYS[2], id, now)
return {1, now, last}
