-- rotate_end: a rotation ends. Done: the modem is ready at once on every
-- set where it is not quarantined or leased (its new IP owes no site any
-- pause). Failed: the rotating site's set quarantines it as a ban would,
-- the others are ready. The mark goes, and the rotation is logged for the
-- stats (the last 1000).
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  rotation log LIST: "end-ms|took-ms|ok 1/0|id"
-- KEYS[3]  exit HASH: id -> the modem's exit IP last learned
-- KEYS[4]  ready ZSET of the rotation's (site, class)
-- KEYS[5]  its quarantine ZSET
-- KEYS[6]  its site's leases HASH
-- KEYS[7]  known HASH: every other set it lists (lua/lib/sets.lua) is
--          made ready as on done, with its quarantine and leases
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  rotation token
-- ARGV[4]  1 done, 0 failed
-- ARGV[5]  the new exit IP ("" when failed)
-- ARGV[6]  quarantine ms when failed
-- ARGV[7]  how long the rotation took, ms
--
-- Returns {1} | {-1} the rotation is not live (nothing changed).
--
-- lib: now sets

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if not r or string.match(r, '^(%d+)|') ~= ARGV[3] then return {-1} end
redis.call('HDEL', KEYS[1], id)
-- ready_now(s) makes the modem ready at once in set s unless quarantined
-- or leased there
local function ready_now(s)
  local q = tonumber(redis.call('ZSCORE', s.quarantine, id) or '0')
  local l = redis.call('HGET', s.leases, id)
  local live = l and tonumber(string.match(l, '^%d+|(%d+)|')) > now
  if q <= now and not live then redis.call('ZADD', s.ready, 'XX', 'LT', now, id) end
end
if ARGV[4] == '0' then
  local q = now + ARGV[6]
  redis.call('ZADD', KEYS[5], 'GT', q, id)
  redis.call('ZADD', KEYS[4], 'XX', 'GT', q, id)
else
  ready_now({ready = KEYS[4], quarantine = KEYS[5], leases = KEYS[6]})
end
for _, s in ipairs(known_sets(KEYS[7])) do
  if s.ready ~= KEYS[4] then ready_now(s) end
end
redis.call('LPUSH', KEYS[2], now .. '|' .. ARGV[7] .. '|' .. ARGV[4] .. '|' .. id)
redis.call('LTRIM', KEYS[2], 0, 999)
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], id, ARGV[5]) end
return {1}
