-- rotate_end: a rotation ends. Done: the modem is ready at once on every
-- set where it is not quarantined or leased (its new IP owes no site any
-- pause). Failed: the rotating site's set quarantines it as a ban would,
-- the others are ready. The mark goes, and the rotation is logged for the
-- stats (the last 1000).
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  rotation log LIST: "end-ms|took-ms|ok 1/0|id"
-- KEYS[3]  exit HASH: id -> the modem's exit IP last learned
-- KEYS[4…] triples (ready ZSET, quarantine ZSET, leases HASH) of every
--          known (site, class), the rotating site's first
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
-- lib: now

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if not r or string.match(r, '^(%d+)|') ~= ARGV[3] then return {-1} end
redis.call('HDEL', KEYS[1], id)
for i = 4, #KEYS, 3 do
  local ready, quar, leases = KEYS[i], KEYS[i + 1], KEYS[i + 2]
  if ARGV[4] == '0' and i == 4 then
    local q = now + ARGV[6]
    redis.call('ZADD', quar, 'GT', q, id)
    redis.call('ZADD', ready, 'XX', 'GT', q, id)
  else
    local q = tonumber(redis.call('ZSCORE', quar, id) or '0')
    local l = redis.call('HGET', leases, id)
    local live = l and tonumber(string.match(l, '^%d+|(%d+)|')) > now
    if q <= now and not live then redis.call('ZADD', ready, 'XX', 'LT', now, id) end
  end
end
redis.call('LPUSH', KEYS[2], now .. '|' .. ARGV[7] .. '|' .. ARGV[4] .. '|' .. id)
redis.call('LTRIM', KEYS[2], 0, 999)
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], id, ARGV[5]) end
return {1}
