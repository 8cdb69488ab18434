package proxies

import "github.com/redis/go-redis/v9"

// Every state change of the broker is one of these scripts: one round trip,
// atomic, on Redis's own clock (TIME) plus the broker's injected skew, so
// servers with skewed clocks agree. Times are milliseconds.

// luaNow is the first line of every timed script: now is Redis TIME in ms
// plus the skew in ARGV[1] (Lua turns the strings into numbers). It is
// inlined rather than a function: a closure per call costs more than the
// arithmetic.
const luaNow = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[1]
`

// luaTake leases id: new token, score = expiry + min_interval (a dead
// holder's proxy frees itself after its TTL, and the next lease is still
// spaced after a request sent just before expiry), lease hash entry,
// exclusive-mode busy entry. Uses the Lease KEYS/ARGV. (The per-holder
// counter is bumped when the lease ends, in the release script's stats
// write, which saves a call here.) ver is the ready set's sync marker
// ("#<version>"); the spec is read only when the caller's spec cache is
// not of that version (ARGV[9]), so the hot path skips the HGET.
// The lease value is "token|expiry|holder|task"; the busy value
// "token|expiry|site".
const luaTake = `
local function take(id, ver)
  local tok = redis.call('INCR', KEYS[3])
  local exp = now + ARGV[2]
  redis.call('ZADD', KEYS[1], exp + ARGV[3], id)
  redis.call('HSET', KEYS[2], id, tok .. '|' .. exp .. '|' .. ARGV[4] .. '|' .. ARGV[5])
  if ARGV[8] ~= '0' then redis.call('HSET', KEYS[7], id, tok .. '|' .. exp .. '|' .. ARGV[7]) end
  if ver == ARGV[9] then return {1, id, tok, now, exp, ver} end
  return {1, id, tok, now, exp, ver, redis.call('HGET', KEYS[4], id)}
end
local function busyUntil(id) -- exclusive mode: live lease on any site
  if ARGV[8] == '0' then return nil end
  local b = redis.call('HGET', KEYS[7], id)
  if not b then return nil end
  local exp = tonumber(string.match(b, '^%d+|(%d+)|'))
  if exp > now then return exp end
  return nil
end
`

// luaEpoch is the lease scripts' failover check (failover.go), on the
// Lease KEYS/ARGV: fenced() returns when new leases may be given again
// while they may not, else nil. ARGV[10] is "-1" with epochs off, else the
// fence in ms. When the master's replication ID is not the one the epoch
// HASH (KEYS[8]) last saw, the epoch goes up, the token counter (KEYS[3])
// is raised to epoch * 2^32 so no token of an earlier epoch is issued
// again, and new leases are fenced off for ARGV[10] ms (not the first
// time a pool sees an ID: nothing was leased before).
const luaEpoch = `
local function fenced()
  if ARGV[10] == '-1' then return nil end
  local rid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
  local e = redis.call('HMGET', KEYS[8], 'replid', 'fence')
  local fence = tonumber(e[2]) or 0
  if e[1] ~= rid then
    local n = redis.call('HINCRBY', KEYS[8], 'n', 1)
    fence = 0
    if e[1] then fence = now + tonumber(ARGV[10]) end
    redis.call('HSET', KEYS[8], 'replid', rid, 'fence', fence)
    local floor = n * 4294967296
    if tonumber(redis.call('GET', KEYS[3]) or '0') < floor then redis.call('SET', KEYS[3], floor) end
  end
  if fence > now then return fence end
  return nil
end
`

// A synced ready set holds one sync marker besides its proxies: the member
// "#<version>" at score -inf (proxy IDs are hex, never "#"). Import and
// remove delete the markers of every ready set (luaUnsync), sync adds it
// back. So the lease script learns that its set is fresh from the
// ZRANGEBYSCORE it runs anyway: the marker is always its first member.
// The known HASH keeps the synced version too, for LeaseProxy and Stats.

// luaFresh returns {-2} when the ready set (KEYS[1]) was not synced since
// the last import or remove: those reset every field of the known HASH
// (KEYS[5]) to "", and a sync sets its field again. Sets kv to the version.
const luaFresh = `
local kv = redis.call('HGET', KEYS[5], ARGV[6])
if not kv or kv == '' then return {-2} end
`

// luaCleared is the lease script's first choice, on the Lease KEYS/ARGV:
// a proxy that holds the site's clearance (KEYS[9], MarkCleared), so a
// JavaScript challenge costs a browser visit per proxy, not per lease.
// cleared() takes the first of them (at most 64 looked at) that is ready
// now; with none ready, but one not leased that is ready within the
// site's clearance wait (ARGV[11] ms), it answers not-ready until then,
// so the caller waits for it rather than pay a new challenge; else nil:
// the usual choice. A site no proxy holds a clearance of costs one
// ZRANGEBYSCORE of a missing key.
const luaCleared = `
local function cleared()
  local ids = redis.call('ZRANGEBYSCORE', KEYS[9], '(' .. now, '+inf', 'LIMIT', 0, 64)
  if #ids == 0 then return nil end
  local m = redis.call('ZRANGE', KEYS[1], 0, 0)
  if string.byte(m[1] or '') ~= 35 then return {-2} end -- no '#' marker
  local soon
  for _, id in ipairs(ids) do
    local s = redis.call('ZSCORE', KEYS[1], id)
    s = s and tonumber(s)
    if s and s <= now then
      if not busyUntil(id) then return take(id, m[1]) end
    elseif s and s <= now + ARGV[11] and (not soon or s < soon) and redis.call('HEXISTS', KEYS[2], id) == 0 then
      soon = s
    end
  end
  if soon then return {0, soon, now, 0, 0} end
  return nil
end
`

// leaseScript takes a ready proxy that holds the site's clearance
// (luaCleared), else the proxy with the lowest ready-at <= now: O(log N).
//
// KEYS[1] ready ZSET (site, class)   KEYS[2] leases HASH (site)
// KEYS[3] token counter              KEYS[4] proxies HASH
// KEYS[5] known HASH                 KEYS[6] quarantine ZSET (site, class)
// KEYS[7] busy HASH                 KEYS[8] epoch HASH
// KEYS[9] cleared ZSET (site)
// ARGV[1] skew ms  ARGV[2] ttl ms  ARGV[3] min_interval ms  ARGV[4] holder
// ARGV[5] task  ARGV[6] known field  ARGV[7] site
// ARGV[8] "0" in shared and partitioned mode; in exclusive mode the most ms
// a proxy leased on another site is pushed back on this one
// ARGV[9] sync marker the caller's spec cache holds ("" for none)
// ARGV[10] epoch fence ms, "-1" with epochs off (luaEpoch)
// ARGV[11] the site's clearance wait ms, 0 for none (luaCleared)
//
// Returns {1, id, token, now, expiry, marker[, spec]} (spec when the
// marker is not ARGV[9]) | {0, first-ready-at, now, exhausted 1/0, leases
// of the site} (the first ready-at is the fence's end while fenced) | {-1}
// empty | {-2} ready set out of date: sync and retry.
var leaseScript = redis.NewScript(luaNow + luaTake + luaEpoch + luaCleared + `
local f = fenced()
if f then return {0, f, now, 0, 0} end
local r = cleared()
if r then return r end
for i = 1, 32 do
  local c = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 2)
  if string.byte(c[1] or '') ~= 35 then return {-2} end -- no '#' marker
  if not c[2] then break end
  local b = busyUntil(c[2])
  if not b then return take(c[2], c[1]) end
  -- held on another site: look again when it expires, or after the
  -- poll cap, since it may be released earlier
  redis.call('ZADD', KEYS[1], math.min(b, now + ARGV[8]), c[2])
end
local first = redis.call('ZRANGE', KEYS[1], 1, 1, 'WITHSCORES')
if #first == 0 then return {-1} end
local q = redis.call('ZCOUNT', KEYS[6], '(' .. now, '+inf')
local ex = 0
if q >= redis.call('ZCARD', KEYS[1]) - 1 then ex = 1 end
return {0, first[2], now, ex, redis.call('HLEN', KEYS[2])}
`)

// leaseProxyScript takes one named proxy (sticky resume).
//
// KEYS and ARGV[1..10] as leaseScript; ARGV[11] proxy id (KEYS[9] is
// not read).
// Returns as leaseScript, plus {-3} not in the pool for this site and
// class, {-4} leased by someone, {-5, until} quarantined. A live lease
// held for the same task (ARGV[5]) is taken over with a new token: its
// holder died and the task runs again; NotBefore is then now+min_interval.
var leaseProxyScript = redis.NewScript(luaNow + luaFresh + luaTake + luaEpoch + `
local f = fenced()
if f then return {0, f, now, 0, 0} end
local id = ARGV[11]
local score = redis.call('ZSCORE', KEYS[1], id)
if not score then return {-3} end
local cur = redis.call('HGET', KEYS[2], id)
local takeover = false
if cur then
  local tok, exp, task = string.match(cur, '^(%d+)|(%d+)|[^|]*|(.*)$')
  if tonumber(exp) > now then
    -- a live lease of the same task is handed over: the task runs again
    -- because its worker died; the old token is fenced out
    if task ~= ARGV[5] then return {-4} end
    takeover = tok
  end
end
if busyUntil(id) then -- exclusive mode: held on a site, maybe this one
  if not takeover or string.match(redis.call('HGET', KEYS[7], id), '^%d+') ~= takeover then return {-4} end
end
local q = tonumber(redis.call('ZSCORE', KEYS[6], id) or '0')
if q > now then return {-5, q} end
if tonumber(score) > now and not takeover then return {0, score, now, 0, 0} end
local r = take(id, '#' .. kv)
-- the old holder may have sent just now: space the first request (I2)
if takeover then r[4] = now + ARGV[3] end
return r
`)

// releaseScript ends a lease with an outcome if its token is the live one.
// It counts the lease for its holder ("<id>|h|<holder>"). The ok path, the
// hot one, reads and writes all its counters with one HMGET and one HSET.
//
// KEYS[1] ready ZSET  KEYS[2] leases HASH  KEYS[3] stats HASH
// KEYS[4] quarantine ZSET  KEYS[5] busy HASH, in exclusive mode only
// ARGV[1] skew ms  ARGV[2] id  ARGV[3] token  ARGV[4] outcome kind
// ARGV[5] min_interval ms  ARGV[6] latency ms (ok) | penalty ms (failed) |
// retry-after ms (rate_limited)  ARGV[7] holder as the lease script stored
// it (the token is the live one only for that lease, so no parsing of the
// stored value is needed); for banned only: ARGV[8] ban reason
// ARGV[9] quarantine base ms  ARGV[10] cap ms  ARGV[11] floor ms
// ARGV[12] random in [0,1) for the jitter; for failed only: ARGV[8]
// penalty cap ms (the penalty doubles with each failure since the last
// ok, counted in "<id>|failstreak")
//
// Returns {1, ready-at} or {0} when the token is stale (nothing changed).
var releaseScript = redis.NewScript(luaNow + `
local id, tok, s = ARGV[2], ARGV[3], KEYS[3]
local cur = redis.call('HGET', KEYS[2], id)
if not cur or string.sub(cur, 1, #tok + 1) ~= tok .. '|' then return {0} end
local h = id .. '|h|' .. ARGV[7]
redis.call('HDEL', KEYS[2], id)
if KEYS[5] then
  local b = redis.call('HGET', KEYS[5], id)
  if b and string.match(b, '^%d+') == tok then redis.call('HDEL', KEYS[5], id) end
end
-- up is now rounded up: TIME's ms floor is up to 1ms behind the moment
-- the last request's response came back, and ready-at must be at least
-- min_interval after that moment, not after its floor (I2); a site
-- without an interval needs no rounding
local mi, kind, up = tonumber(ARGV[5]), ARGV[4], now
if mi > 0 then up = now + 1 end
local at = up + mi
if kind == 'ok' then
  local ok, ewma, streak, fs = id .. '|ok', id .. '|ewma', id .. '|streak', id .. '|failstreak'
  local v = redis.call('HMGET', s, ok, ewma, streak, h, fs)
  local lat = tonumber(ARGV[6])
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
  at = at + math.min(tonumber(ARGV[8]), ARGV[6] * 2 ^ math.min(n - 1, 30))
elseif kind == 'rate_limited' then
  at = up + math.max(tonumber(ARGV[6]), mi)
elseif kind == 'banned' then
  local n = redis.call('HINCRBY', s, id .. '|streak', 1)
  redis.call('HINCRBY', s, id .. '|ban', 1)
  redis.call('HSET', s, id .. '|lastban', ARGV[8], id .. '|lastbanat', now)
  local lo = tonumber(ARGV[11])
  local hi = math.max(lo, math.min(tonumber(ARGV[10]), tonumber(ARGV[9]) * 2 ^ (n - 1)))
  at = up + math.max(mi, math.floor(lo + (hi - lo) * tonumber(ARGV[12])))
  redis.call('ZADD', KEYS[4], at, id)
end
redis.call('ZADD', KEYS[1], 'XX', at, id)
return {1, at}
`)

// extendScript pushes a live lease's expiry to now+ttl.
//
// KEYS[1] ready ZSET  KEYS[2] leases HASH  KEYS[3] busy HASH
// ARGV[1] skew ms  ARGV[2] id  ARGV[3] token  ARGV[4] ttl ms
// ARGV[5] min_interval ms  ARGV[6] site
//
// Returns {1, now, expiry} or {0} when the token is stale.
var extendScript = redis.NewScript(luaNow + `
local id, tok = ARGV[2], ARGV[3]
local cur = redis.call('HGET', KEYS[2], id)
if not cur then return {0} end
local ctok, rest = string.match(cur, '^(%d+)|%d+|(.*)$')
if ctok ~= tok then return {0} end
local exp = now + ARGV[4]
redis.call('HSET', KEYS[2], id, tok .. '|' .. exp .. '|' .. rest)
redis.call('ZADD', KEYS[1], 'XX', exp + ARGV[5], id)
local b = redis.call('HGET', KEYS[3], id)
if b and string.match(b, '^%d+') == tok then redis.call('HSET', KEYS[3], id, tok .. '|' .. exp .. '|' .. ARGV[6]) end
return {1, now, exp}
`)

// luaUnsync bumps the version (KEYS[3]) and marks every ready set out of
// date, so each resyncs on its next lease: it resets every field of the
// known HASH to "" and deletes each set's sync marker (score -inf). The
// caller passes every field of the known HASH it read (ARGV[2 ..
// 1+ARGV[1]]) and, in the same order from KEYS index kr, the ready set of
// each: a script touches only keys it is given (Redis Cluster routes by
// them). known(h) says whether the fields are still all of h's: a lease
// that synced a new set meanwhile makes the caller read them again.
const luaUnsync = `
local nf = tonumber(ARGV[1])
local function known(h)
  if redis.call('HLEN', h) ~= nf then return false end
  for i = 2, 1 + nf do
    if redis.call('HEXISTS', h, ARGV[i]) == 0 then return false end
  end
  return true
end
local function unsync(h, kr)
  for i = 0, nf - 1 do
    redis.call('HSET', h, ARGV[2 + i], '')
    redis.call('ZREMRANGEBYSCORE', KEYS[kr + i], '-inf', '-inf')
  end
  return redis.call('INCR', KEYS[3])
end
`

// importScript adds or replaces proxies, all or nothing, if each one's
// spec is still the one the caller read, and bumps the version so every
// ready set resyncs on its next lease.
//
// KEYS[1] proxies HASH  KEYS[2] classes HASH  KEYS[3] version
// KEYS[4] known HASH  KEYS[5 .. 4+n] the ready ZSET of each known field
// ARGV[1] n  ARGV[2 .. 1+n] the known fields
// ARGV[2+n ..] quadruples: id, spec JSON, class, the spec read ("" for
// none).
// Returns the new version; -1 when the known fields are not ARGV's, -2
// when a proxy's spec is not the one read (nothing changed: read again).
var importScript = redis.NewScript(luaUnsync + `
if not known(KEYS[4]) then return -1 end
for i = 2 + nf, #ARGV, 4 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 3] then return -2 end
end
for i = 2 + nf, #ARGV, 4 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
return unsync(KEYS[4], 5)
`)

// removeScript deletes proxies from the pool and every ready, quarantine,
// lease, clearance and busy entry, and bumps the version.
//
// KEYS[1] proxies HASH  KEYS[2] classes HASH  KEYS[3] version
// KEYS[4] busy HASH  KEYS[5] known HASH
// KEYS[6 .. 5+n] the ready ZSET of each known field
// KEYS[6+n .. 5+2n] the quarantine ZSET of each known field
// KEYS[6+2n ..] per site: its lease HASH, then its cleared ZSET
// ARGV[1] n  ARGV[2 .. 1+n] the known fields  ARGV[2+n ..] ids.
// Returns how many proxies were in the pool, or -1 as importScript.
var removeScript = redis.NewScript(luaUnsync + `
if not known(KEYS[5]) then return -1 end
local n = 0
for i = 2 + nf, #ARGV do
  local id = ARGV[i]
  n = n + redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
  for k = 6, #KEYS do
    if k < 6 + 2 * nf or (k - 6 - 2 * nf) % 2 == 1 then
      redis.call('ZREM', KEYS[k], id)
    else
      redis.call('HDEL', KEYS[k], id)
    end
  end
end
unsync(KEYS[5], 6)
return n
`)

// syncScript makes one ready set hold exactly the eligible proxies, if the
// pool version is still the one they were computed from, and marks it
// fresh (sync marker, known field). New proxies are ready at once (score 0).
//
// KEYS[1] ready ZSET  KEYS[2] known HASH  KEYS[3] version
// KEYS[4] quarantine ZSET
// ARGV[1] version read ("" for none)  ARGV[2] known field  ARGV[3..] ids.
// Returns 1, or 0 when the version moved (read again and retry).
var syncScript = redis.NewScript(`
local v = redis.call('GET', KEYS[3]) or ''
if v ~= ARGV[1] then return 0 end
-- a set synced before any import is fresh too (the lease script takes ""
-- for out of date)
if v == '' then v = '0' end
local want = {}
for i = 3, #ARGV do want[ARGV[i]] = true end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if want[id] then want[id] = false else
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[4], id)
  end
end
for id, add in pairs(want) do
  if add then redis.call('ZADD', KEYS[1], 0, id) end
end
redis.call('ZADD', KEYS[1], '-inf', '#' .. v)
redis.call('HSET', KEYS[2], ARGV[2], v)
return 1
`)

// unbanScript ends the quarantine of proxies (all quarantined ones when no
// id is given) on every listed site and class: ready at once.
//
// KEYS triples: ready ZSET, quarantine ZSET, stats HASH of one site and class.
// ARGV[1] skew ms  ARGV[2..] ids (none: all).
// Returns how many (proxy, site) quarantines ended.
var unbanScript = redis.NewScript(luaNow + `
local n = 0
for k = 1, #KEYS, 3 do
  local ids = {}
  if #ARGV > 1 then
    for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
  else
    ids = redis.call('ZRANGEBYSCORE', KEYS[k + 1], '(' .. now, '+inf')
  end
  for _, id in ipairs(ids) do
    local q = tonumber(redis.call('ZSCORE', KEYS[k + 1], id) or '0')
    redis.call('ZREM', KEYS[k + 1], id)
    redis.call('HDEL', KEYS[k + 2], id .. '|streak')
    if q > now then
      redis.call('ZADD', KEYS[k], 'XX', now, id)
      n = n + 1
    end
  end
end
return n
`)
