-- lease: take a ready proxy of (site, class) that holds the site's
-- clearance (cleared), else the proxy with the lowest ready-at <= now:
-- O(log N). A gateway slot is ready when its exit is (slotexit).
--
-- KEYS[1]  ready ZSET (site, class)
-- KEYS[2]  leases HASH (site)
-- KEYS[3]  token counter
-- KEYS[4]  proxies HASH
-- KEYS[5]  known HASH
-- KEYS[6]  quarantine ZSET (site, class)
-- KEYS[7]  busy HASH
-- KEYS[8]  epoch HASH
-- KEYS[9]  cleared ZSET (site)
-- KEYS[10] rotating HASH: modems changing their IP (rotate_begin.lua)
-- KEYS[11] pace limit HASH (site, class): the learned pace (learn.lua)
-- KEYS[12] slot exit HASH (site): gateway slot id -> exit IP
--          (exit_hold.lua; lua/lib/slotexit.lua)
-- KEYS[13] exit slots HASH (site): exit IP -> its slots, by spaces
-- KEYS[14] exit holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[15] exit ready ZSET (site): ip -> ready-at ms
-- KEYS[16] slot draw STRING (site): a fresh slot's draw in flight
-- ARGV[1]  skew ms
-- ARGV[2]  ttl ms
-- ARGV[3]  min_interval ms; negative: the pace is learned (KEYS[11]),
--          and -ARGV[3] is the pace while nothing is learned yet
-- ARGV[4]  holder
-- ARGV[5]  task
-- ARGV[6]  known field
-- ARGV[7]  site
-- ARGV[8]  exclusive mode: the most ms a proxy leased on another site is
--          pushed back on this one; 0 in shared and partitioned mode
-- ARGV[9]  sync marker the caller's spec cache holds ("" for none)
-- ARGV[10] epoch fence ms, -1 with epochs off (fenced)
-- ARGV[11] the site's clearance wait ms, 0 for none (cleared)
-- (ARGV[12] is lease_proxy.lua's proxy id; not sent here)
--
-- Returns {1, id, token, now, expiry, marker, pace ms[, spec]} (spec
-- when the marker is not ARGV[9]) | {0, first-ready-at, now, exhausted 1/0, leases
-- of the site + modems rotating} (the first ready-at is the fence's end while fenced) | {-1}
-- empty | {-2} ready set out of date: sync and retry.
--
-- lib: now lease limit learn take slotexit epoch cleared

local L = lease_request(redis_now(ARGV[1]))
local f = fenced(L)
if f then return {0, f, L.now, 0, 0} end
local r = cleared(L)
if r then return r end
local fresh -- the first fresh gateway slot passed over (slotexit)
for i = 1, 32 do
  local c = redis.call('ZRANGEBYSCORE', L.ready, '-inf', L.now, 'LIMIT', 0, 2)
  if string.byte(c[1] or '') ~= 35 then return {-2} end -- no '#' marker
  if not c[2] then break end
  local rot = rotating_until(L, c[2])
  local b = busy_until(L, c[2])
  local ex, new = nil, false
  if not b and not rot then ex, new = slot_exit_until(L, c[2]) end
  if not b and not rot and not ex and not new then return take_slot(L, c[2], c[1]) end
  if new then
    -- a slot on no known exit yet: taken if no slot on a known exit is
    -- ready now and no other fresh slot draws, else looked at again a
    -- pace later
    if not fresh and redis.call('EXISTS', L.slot_draw) == 0 then fresh = c end
    redis.call('ZADD', L.ready, L.now + slot_pace(L), c[2])
  elseif ex then
    -- a gateway slot whose exit is held or resting: ready with its exit
    redis.call('ZADD', L.ready, ex, c[2])
  elseif rot then
    -- a modem changing its IP: ready when its rotation ends or is
    -- pushed (rotate_end.lua and rotate_extend.lua move it)
    redis.call('ZADD', L.ready, rot, c[2])
  else
    -- held on another site: look again when it expires, or after the
    -- poll cap, since it may be released earlier
    redis.call('ZADD', L.ready, math.min(b, L.now + L.exclusive), c[2])
  end
end
if fresh then return take_fresh(L, fresh[2], fresh[1]) end
local first = redis.call('ZRANGE', L.ready, 1, 1, 'WITHSCORES')
if #first == 0 then return {-1} end
local q = redis.call('ZCOUNT', L.quarantine, '(' .. L.now, '+inf')
local ex = 0
if q >= redis.call('ZCARD', L.ready) - 1 then ex = 1 end
-- leases of the site and modems rotating: either may free a proxy before
-- its ready-at (a release; a rotation's end, which sets it ready at once)
return {0, first[2], L.now, ex, redis.call('HLEN', L.leases) + redis.call('HLEN', L.rotating)}
