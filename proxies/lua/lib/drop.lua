-- The remove and import scripts take proxies out of the pool with every
-- trace a lease or a ban left. Their KEYS are alike (keys.dropKeys):
--   K[1] proxies HASH, K[2] classes HASH, K[3] version, K[4] busy HASH,
--   K[5] known HASH (its sets listed by known_sets).

-- drop(K, sets, sites, id) deletes proxy id from the pool, its class,
-- exclusive lease, every ready and quarantine entry of sets, and its
-- lease and clearance mark on sites (known_sets' lists). A live lease on
-- it ends: its holder's next extend or release finds no lease and is
-- refused as stale. Returns 1 if id was in the pool, else 0.
local function drop(K, sets, sites, id)
  local n = redis.call('HDEL', K[1], id)
  redis.call('HDEL', K[2], id)
  redis.call('HDEL', K[4], id)
  for _, s in ipairs(sets) do
    redis.call('ZREM', s.ready, id)
    redis.call('ZREM', s.quarantine, id)
  end
  for _, s in ipairs(sites) do
    redis.call('HDEL', s.leases, id)
    redis.call('ZREM', s.cleared, id)
  end
  return n
end

-- unsync(known, sets, version) marks every ready set of sets out of date
-- (lua/lib/fresh.lua): it resets the set's field of the known HASH known
-- to "", deletes its sync marker (score -inf) and bumps the version key;
-- it returns the new version.
local function unsync(known, sets, version)
  for _, s in ipairs(sets) do
    redis.call('HSET', known, s.field, '')
    redis.call('ZREMRANGEBYSCORE', s.ready, '-inf', '-inf')
  end
  return redis.call('INCR', version)
end
