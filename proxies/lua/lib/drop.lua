-- The remove and import scripts take proxies out of the pool with every
-- trace a lease or a ban left. Their KEYS are laid out alike
-- (RedisBroker.dropKeys):
--   K[1] proxies HASH, K[2] classes HASH, K[3] version, K[4] busy HASH,
--   K[5] known HASH, K[6 .. 5+nf] the ready ZSET of each known field,
--   K[6+nf .. 5+2nf] the quarantine ZSET of each, then per site its
--   leases HASH and its cleared ZSET.

-- drop(K, nf, id) deletes proxy id from the pool, its class, exclusive
-- lease, every ready and quarantine entry, lease and clearance mark. A
-- live lease on it ends: its holder's next extend or release finds no
-- lease and is refused as stale. Returns 1 if id was in the pool, else 0.
local function drop(K, nf, id)
  local n = redis.call('HDEL', K[1], id)
  redis.call('HDEL', K[2], id)
  redis.call('HDEL', K[4], id)
  for k = 6, #K do
    if k < 6 + 2 * nf or (k - 6 - 2 * nf) % 2 == 1 then
      redis.call('ZREM', K[k], id)
    else
      redis.call('HDEL', K[k], id)
    end
  end
  return n
end
