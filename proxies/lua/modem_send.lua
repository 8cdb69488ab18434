-- modem_send: a session may send one request through a modem now. Not
-- while the modem rotates; and a site that rotates by volume or age
-- (rotate_after, rotate_every) asks for a rotation when the modem's
-- current IP has sent it that many requests, or that long. The request
-- is counted against (modem, site, IP) and in the minute's total.
--
-- KEYS[1]  rotating HASH
-- KEYS[2]  use HASH: "id|site" -> "ip|requests|first-ms"
-- KEYS[3]  this minute's request counter (expires in 2 h)
-- ARGV[1]  skew ms
-- ARGV[2]  modem id
-- ARGV[3]  site
-- ARGV[4]  the exit IP the session holds
-- ARGV[5]  rotate_after (requests, 0 for none)
-- ARGV[6]  rotate_every ms (0 for none)
--
-- Returns {1, requests so far} send | {0} rotating: do not send | {2,
-- requests, age ms} rotate first.
--
-- lib: now

local now = redis_now(ARGV[1])
local id = ARGV[2]
local r = redis.call('HGET', KEYS[1], id)
if r and tonumber(string.match(r, '^%d+|(%d+)|')) > now then return {0} end
local f = id .. '|' .. ARGV[3]
local n, first = 0, now
local u = redis.call('HGET', KEYS[2], f)
if u then
  local ip, c, t = string.match(u, '^(.*)|(%d+)|(%d+)$')
  if ip == ARGV[4] then n, first = tonumber(c), tonumber(t) end
end
local after, every = tonumber(ARGV[5]), tonumber(ARGV[6])
if (after > 0 and n >= after) or (every > 0 and now - first >= every) then
  return {2, n, now - first}
end
redis.call('HSET', KEYS[2], f, ARGV[4] .. '|' .. (n + 1) .. '|' .. first)
redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], 7200)
return {1, n + 1}
