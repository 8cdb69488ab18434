-- release: end a lease with an outcome if its token is the live one. It
-- counts the lease for its holder ("<id>|h|<holder>"). The ok path, the
-- hot one, reads and writes all its counters with one HMGET and one HSET.
--
-- KEYS[1]  ready ZSET (site, class)
-- KEYS[2]  leases HASH (site)
-- KEYS[3]  stats HASH (site)
-- KEYS[4]  quarantine ZSET (site, class)
-- KEYS[5]  pace limit HASH (site, class): the learned pace (learn.lua),
--          read only when ARGV[7] is 1
-- KEYS[6]  pace limit log LIST (site, class)
-- KEYS[7]  busy HASH, in exclusive mode only
-- ARGV[1]  skew ms
-- ARGV[2]  proxy id
-- ARGV[3]  token
-- ARGV[4]  holder as the lease script stored it (the token is the live
--          one only for that lease, so no parsing of the stored value is
--          needed)
-- ARGV[5]  outcome kind: ok, failed, rate_limited, banned or neutral
-- ARGV[6]  min_interval ms: the pace the lease ran at
-- ARGV[7]  1: the site's pace is learned (ARGV[6] is the lease's; the
--          learner takes the answer and sets the proxy's next pace), 0
-- ARGV[8]  latency ms, fractional (ok; 0 otherwise)
-- ARGV[9]  retry-after ms (rate_limited; a neutral outcome's rest when
--          sent; 0 otherwise)
-- ARGV[10] fail penalty ms: the first failure's; it doubles with each
--          failure since the last ok, counted in "<id>|failstreak"
-- ARGV[11] fail penalty cap ms
-- ARGV[12] ban reason
-- ARGV[13] quarantine base ms: the first ban's ceiling, doubled per ban
--          since the last ok (counted in "<id>|streak")
-- ARGV[14] quarantine cap ms
-- ARGV[15] quarantine floor ms
-- ARGV[16] random in [0,1) for the quarantine's jitter
-- ARGV[17] ok on a learned pace: ms, fractional, from the lease's first
--          request going out to now (Outcome.Sent); absent: not known
-- ARGV[18] ok on a learned pace: the lease's later requests that went
--          out at its pace (Outcome.Paced)
-- The caller sends ARGV up to the last position its outcome reads, so
-- the hot ok path sends eight: ok and neutral 8 (a neutral rest 9),
-- rate_limited 9, failed 11, banned 16, ok with a pace's evidence 18.
--
-- Returns {1, ready-at} or {0} when the token is stale (nothing changed).
--
-- lib: now limit learn

local now = redis_now(ARGV[1])
local id, tok, s = ARGV[2], ARGV[3], KEYS[3]
local cur = redis.call('HGET', KEYS[2], id)
if not cur or string.sub(cur, 1, #tok + 1) ~= tok .. '|' then return {0} end
local h = id .. '|h|' .. ARGV[4]
redis.call('HDEL', KEYS[2], id)
if KEYS[7] then
  local b = redis.call('HGET', KEYS[7], id)
  if b and string.match(b, '^%d+') == tok then redis.call('HDEL', KEYS[7], id) end
end
-- up is now rounded up: TIME's ms floor is up to 1ms behind the moment
-- the last request's response came back, and ready-at must be at least
-- min_interval after that moment, not after its floor (I2); a site
-- without an interval needs no rounding
local mi, kind, up = tonumber(ARGV[6]), ARGV[5], now
if ARGV[7] == '1' then
  mi = learn(KEYS[5], KEYS[6], KEYS[1], now, id, kind, mi, tonumber(ARGV[17]), tonumber(ARGV[18]) or 0)
end
if mi > 0 then up = now + 1 end
local at = up + mi
if kind == 'ok' then
  local ok, ewma, streak, fs = id .. '|ok', id .. '|ewma', id .. '|streak', id .. '|failstreak'
  local v = redis.call('HMGET', s, ok, ewma, streak, h, fs)
  local lat = tonumber(ARGV[8])
  if v[2] then lat = v[2] * 0.8 + lat * 0.2 end
  redis.call('HSET', s, ok, (tonumber(v[1]) or 0) + 1, ewma, lat, h, (tonumber(v[4]) or 0) + 1)
  if v[3] or v[5] then redis.call('HDEL', s, streak, fs) end
  if v[3] then redis.call('ZREM', KEYS[4], id) end
else
  redis.call('HINCRBY', s, h, 1)
end
if kind == 'failed' then
  redis.call('HINCRBY', s, id .. '|fail', 1)
  local n = redis.call('HINCRBY', s, id .. '|failstreak', 1)
  at = at + math.min(tonumber(ARGV[11]), ARGV[10] * 2 ^ math.min(n - 1, 30))
elseif kind == 'rate_limited' or (kind == 'neutral' and ARGV[9]) then
  at = up + math.max(tonumber(ARGV[9]), mi)
elseif kind == 'banned' then
  local n = redis.call('HINCRBY', s, id .. '|streak', 1)
  redis.call('HINCRBY', s, id .. '|ban', 1)
  redis.call('HSET', s, id .. '|lastban', ARGV[12], id .. '|lastbanat', now)
  local lo = tonumber(ARGV[15])
  local hi = math.max(lo, math.min(tonumber(ARGV[14]), tonumber(ARGV[13]) * 2 ^ (n - 1)))
  at = up + math.max(mi, math.floor(lo + (hi - lo) * tonumber(ARGV[16])))
  redis.call('ZADD', KEYS[4], at, id)
end
redis.call('ZADD', KEYS[1], 'XX', at, id)
return {1, at}
