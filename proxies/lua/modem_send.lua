-- modem_send: a session may send one request through a modem (or, for
-- VolumeSend, through any proxy whose exit IP the site's volume budget
-- counts) now. Not while the modem rotates; and a site that rotates by
-- volume or age (rotate_after, rotate_every) asks for a rotation (a
-- proxy that cannot rotate rests instead) when the exit IP has sent it
-- that many requests, or that long since its first. The count
-- is the IP's, whichever modem carried it (the site counts by IP, and a
-- carrier hands an IP one modem left to another), and is forgotten
-- ARGV[5] ms after the IP's first request. The request is counted
-- there and in the minute's total.
--
-- With rotate_after auto (ARGV[6] = 1) the budget is the site's learned
-- volume:<site> (modem_volume.lua learns it from the bans). Until one is
-- learned, one exit IP at a time is the canary: it sends until the site
-- bans it, and every other IP rotates one request short of the canary's
-- count, so the first ban, the canary's, is the site's only one before
-- its budget is known (a canary that sent nothing for ARGV[9] ms is
-- replaced).
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  use STRING of (site, IP): "requests|first-ms"
-- KEYS[3]  this minute's request counter (expires in 2 h)
-- KEYS[4]  limit HASH volume:<site> (fields value, canary, canary_n,
--          canary_at)
-- KEYS[5]  its log LIST
-- KEYS[6]  limits SET
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  rotate_after (requests, 0 for none)
-- ARGV[4]  rotate_every ms (0 for none)
-- ARGV[5]  how long the IP's count is kept, ms
-- ARGV[6]  1: rotate_after auto
-- ARGV[7]  the exit IP
-- ARGV[8]  the limit's name, volume:<site>
-- ARGV[9]  ms after which a silent canary is replaced
-- ARGV[10] 1: count the request in KEYS[3] (a modem's), 0: not
--
-- Returns {1, requests so far} send | {0} rotating: do not send | {2,
-- requests, age ms, 1 if only the canary's count stopped it (no budget
-- learned yet) | 0} rotate first.
--
-- lib: now volume

local now = redis_now(ARGV[1])
local r = redis.call('HGET', KEYS[1], ARGV[2])
if r and tonumber(string.match(r, '^%d+|(%d+)|')) > now then return {0} end
local n, first = 0, now
local u = redis.call('GET', KEYS[2])
if u then
  local c, t = string.match(u, '^(%d+)|(%d+)$')
  n, first = tonumber(c), tonumber(t)
end
local after, every = tonumber(ARGV[3]), tonumber(ARGV[4])
local canary, trailing = false, 0
if ARGV[6] == '1' then
  volume_record(KEYS[4], KEYS[5], KEYS[6], ARGV[8], now)
  local v = redis.call('HMGET', KEYS[4], 'value', 'canary', 'canary_n', 'canary_at')
  after = tonumber(v[1])
  if after == 0 then
    if not v[2] or v[2] == ARGV[7] or now - tonumber(v[4]) > tonumber(ARGV[9]) then
      canary = true
    else
      after, trailing = math.max(tonumber(v[3]) - 1, 1), 1
    end
  end
end
if (after > 0 and n >= after) or (every > 0 and now - first >= every) then
  return {2, n, now - first, trailing}
end
if canary then redis.call('HSET', KEYS[4], 'canary', ARGV[7], 'canary_n', n + 1, 'canary_at', now) end
if u then
  redis.call('SET', KEYS[2], (n + 1) .. '|' .. first, 'KEEPTTL')
else
  redis.call('SET', KEYS[2], '1|' .. now, 'PX', ARGV[5])
end
if ARGV[10] == '1' then
  redis.call('INCR', KEYS[3])
  redis.call('EXPIRE', KEYS[3], 7200)
end
return {1, n + 1}
