-- The import and remove scripts bump the pool version and mark every
-- ready set out of date, so each resyncs on its next lease. The caller
-- passes every field of the known HASH it read and the ready set of each,
-- in the same order: a script touches only keys it is given (Redis
-- Cluster routes by them).

-- known_fields(h, fields) says whether fields (a list) are still all of
-- the known HASH h's: a lease that synced a new set meanwhile makes the
-- caller read them again.
local function known_fields(h, fields)
  if redis.call('HLEN', h) ~= #fields then return false end
  for _, f in ipairs(fields) do
    if redis.call('HEXISTS', h, f) == 0 then return false end
  end
  return true
end

-- unsync(h, fields, ready, version) resets each of fields of the known
-- HASH h to "", deletes the sync marker (score -inf) of each ready set
-- (ready[i] is the set of fields[i]) and bumps the version key; it
-- returns the new version.
local function unsync(h, fields, ready, version)
  for i, f in ipairs(fields) do
    redis.call('HSET', h, f, '')
    redis.call('ZREMRANGEBYSCORE', ready[i], '-inf', '-inf')
  end
  return redis.call('INCR', version)
end

-- slice(t, from, n) is t[from .. from+n-1] as a new list.
local function slice(t, from, n)
  local r = {}
  for i = 1, n do r[i] = t[from + i - 1] end
  return r
end
