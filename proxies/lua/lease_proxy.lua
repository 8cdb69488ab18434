-- lease_proxy: take one named proxy (sticky resume). A live lease held
-- for the same task (ARGV[5]) is taken over with a new token: its holder
-- died and the task runs again; NotBefore is then now+min_interval.
--
-- KEYS[1]  ready ZSET (site, class)
-- KEYS[2]  leases HASH (site)
-- KEYS[3]  token counter
-- KEYS[4]  proxies HASH
-- KEYS[5]  known HASH
-- KEYS[6]  quarantine ZSET (site, class)
-- KEYS[7]  busy HASH
-- KEYS[8]  epoch HASH
-- KEYS[9]  cleared ZSET (site), not read
-- KEYS[10] rotating HASH: modems changing their IP (rotate_begin.lua)
-- KEYS[11] pace limit HASH (site, class): the learned pace (learn.lua)
-- KEYS[12] slot exit HASH (site): gateway slot id -> exit IP
--          (exit_hold.lua; lua/lib/slotexit.lua)
-- KEYS[13] exit slots HASH (site): exit IP -> its slots, by spaces
-- KEYS[14] exit holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[15] exit ready ZSET (site)
-- KEYS[16] slot draw STRING (site); KEYS[12..16] not read
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
-- ARGV[11] the site's clearance wait ms (not read: the named proxy is
--          taken or refused)
-- ARGV[12] proxy id
--
-- Returns as lease.lua, plus {-3} not in the pool for this site and
-- class, {-4} leased by someone, {-5, until} quarantined.
--
-- lib: now lease limit learn take epoch fresh

local L = lease_request(redis_now(ARGV[1]))
local kv = fresh_version(L)
if not kv then return {-2} end
local f = fenced(L)
if f then return {0, f, L.now, 0, 0} end
local id = ARGV[12]
local score = redis.call('ZSCORE', L.ready, id)
if not score then return {-3} end
local cur = redis.call('HGET', L.leases, id)
local takeover = false
if cur then
  local tok, exp, task = string.match(cur, '^(%d+)|(%d+)|[^|]*|(.*)$')
  if tonumber(exp) > L.now then
    -- a live lease of the same task is handed over: the task runs again
    -- because its worker died; the old token is fenced out
    if task ~= L.task then return {-4} end
    takeover = tok
  end
end
if busy_until(L, id) then -- exclusive mode: held on a site, maybe this one
  if not takeover or string.match(redis.call('HGET', L.busy, id), '^%d+') ~= takeover then return {-4} end
end
local q = tonumber(redis.call('ZSCORE', L.quarantine, id) or '0')
if q > L.now then return {-5, q} end
local rot = rotating_until(L, id)
if rot then return {0, rot, L.now, 0, 0} end
if tonumber(score) > L.now and not takeover then return {0, score, L.now, 0, 0} end
local r = take(L, id, '#' .. kv)
-- the old holder may have sent just now: space the first request (I2)
if takeover then r[4] = L.now + r[7] end
return r
