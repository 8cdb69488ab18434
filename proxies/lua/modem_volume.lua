-- modem_volume: the site banned an exit IP that a modem carried, and the
-- site's rotate_after is auto. The IP's count (modem_send.lua's, the
-- banned request in it) says where the ban fell: the site allowed the
-- requests before it. The site's budget per IP (volume:<site>) becomes
-- ARGV[4] of them (the margin: a request the site counts and the count
-- does not, a window wider than the count's), at least 1, where that
-- is lower than the budget learned, or none was; the canary is then
-- done. A pinned budget stays.
--
-- KEYS[1]  use STRING of (site, IP): "requests|first-ms"
-- KEYS[2]  limit HASH volume:<site>
-- KEYS[3]  its log LIST
-- KEYS[4]  limits SET
-- ARGV[1]  skew ms
-- ARGV[2]  the limit's name, volume:<site>
-- ARGV[3]  the exit IP
-- ARGV[4]  the share of the requests before the ban kept (0..1)
--
-- Returns {budget now, 1 if learned now | 0, requests at the ban}.
--
-- lib: now limit volume

local now = redis_now(ARGV[1])
volume_record(KEYS[2], KEYS[3], KEYS[4], ARGV[2], now)
local cur = tonumber(redis.call('HGET', KEYS[2], 'value'))
local u = redis.call('GET', KEYS[1])
if not u then return {cur, 0, 0} end
local c, t = string.match(u, '^(%d+)|(%d+)$')
local n = tonumber(c)
if n < 2 then return {cur, 0, n} end
local v = math.max(math.floor((n - 1) * tonumber(ARGV[4])), 1)
if cur > 0 and v >= cur then return {cur, 0, n} end
local why = string.format('ban of %s after %d requests in %.1fs', ARGV[3], n, (now - tonumber(t)) / 1000)
local after, moved = limit_set(KEYS[2], KEYS[3], now, v, why)
if moved then redis.call('HDEL', KEYS[2], 'canary', 'canary_n', 'canary_at') end
return {after, moved and 1 or 0, n}
