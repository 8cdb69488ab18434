-- take(L, id, ver) leases proxy id for the lease request L: a new token,
-- ready-at = expiry + min_interval (a dead holder's proxy frees itself
-- after its TTL, and the next lease is still spaced after a request sent
-- just before expiry), the lease HASH entry and, in exclusive mode, the
-- busy entry. (The per-holder counter is bumped when the lease ends, in
-- the release script's stats write, which saves a call here.) ver is the
-- ready set's sync marker ("#<version>"); the spec is read only when the
-- caller's spec cache is not of that version (L.cached), so the hot path
-- skips the HGET. The lease value is "token|expiry|holder|task"; the busy
-- value "token|expiry|site".
-- The lease runs at the site's min_interval, or, when it is learned
-- (L.min_interval < 0), at the pace learned_pace gives the proxy
-- (lua/lib/learn.lua). Returns the lease reply {1, id, token, now,
-- expiry, ver, pace[, spec]}.
local function take(L, id, ver)
  local tok = redis.call('INCR', L.tokens)
  local exp = L.now + L.ttl
  local mi = L.min_interval
  if string.byte(mi) == 45 then mi = learned_pace(L.pace, id, -mi) end -- '-': learned
  redis.call('ZADD', L.ready, exp + mi, id)
  redis.call('HSET', L.leases, id, tok .. '|' .. exp .. '|' .. L.holder .. '|' .. L.task)
  if L.exclusive ~= '0' then redis.call('HSET', L.busy, id, tok .. '|' .. exp .. '|' .. L.site) end
  if ver == L.cached then return {1, id, tok, L.now, exp, ver, mi} end
  return {1, id, tok, L.now, exp, ver, mi, redis.call('HGET', L.proxies, id)}
end

-- busy_until(L, id) is, in exclusive mode, the expiry of a live lease of
-- proxy id on any site; nil when there is none or the mode is another.
local function busy_until(L, id)
  if L.exclusive == '0' then return nil end
  local b = redis.call('HGET', L.busy, id)
  if not b then return nil end
  local exp = tonumber(string.match(b, '^%d+|(%d+)|'))
  if exp > L.now then return exp end
  return nil
end

-- rotating_until(L, id) is the deadline of a live rotation of modem id
-- (rotate_begin.lua): it is not leased before, on any site; an expired
-- mark is deleted. A pool with no rotation going costs one EXISTS per
-- call.
local function rotating_until(L, id)
  if L.any_rotating == nil then L.any_rotating = redis.call('EXISTS', L.rotating) == 1 end
  if not L.any_rotating then return nil end
  local r = redis.call('HGET', L.rotating, id)
  if not r then return nil end
  local dl = tonumber(string.match(r, '^%d+|(%d+)|'))
  if dl > L.now then return dl end
  -- a rotator that died left its mark: gone, so the waiters' count of
  -- rotations (lease.lua) is of live ones
  redis.call('HDEL', L.rotating, id)
  return nil
end
