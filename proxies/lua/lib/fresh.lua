-- A synced ready set holds one sync marker besides its proxies: the
-- member "#<version>" at score -inf (proxy IDs are hex, never "#"). Import
-- and remove delete the markers of every ready set (unsync), sync adds it
-- back. So the lease script learns that its set is fresh from the
-- ZRANGEBYSCORE it runs anyway: the marker is always its first member.
-- The known HASH keeps the synced version too, for LeaseProxy and Stats.

-- fresh_version(L) is the version the ready set (L.ready) was last synced
-- at, from the known HASH (L.known, field L.field); nil when it was not
-- synced since the last import or remove: those reset every field of the
-- known HASH to "", and a sync sets its field again.
local function fresh_version(L)
  local kv = redis.call('HGET', L.known, L.field)
  if not kv or kv == '' then return nil end
  return kv
end
