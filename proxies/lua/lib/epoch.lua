-- fenced(L) is the lease scripts' failover check (failover.go): it
-- returns when new leases may be given again while they may not, else
-- nil. L.fence is '-1' with epochs off, else the fence in ms. When the
-- master's replication ID is not the one the epoch HASH (L.epoch) last
-- saw, the epoch goes up, the token counter (L.tokens) is raised to
-- epoch * 2^32 so no token of an earlier epoch is issued again, and new
-- leases are fenced off for L.fence ms (not the first time a pool sees an
-- ID: nothing was leased before).
local function fenced(L)
  if L.fence == '-1' then return nil end
  local rid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
  local e = redis.call('HMGET', L.epoch, 'replid', 'fence')
  local fence = tonumber(e[2]) or 0
  if e[1] ~= rid then
    local n = redis.call('HINCRBY', L.epoch, 'n', 1)
    fence = 0
    if e[1] then fence = L.now + L.fence end
    redis.call('HSET', L.epoch, 'replid', rid, 'fence', fence)
    local floor = n * 4294967296
    if tonumber(redis.call('GET', L.tokens) or '0') < floor then redis.call('SET', L.tokens, floor) end
  end
  if fence > L.now then return fence end
  return nil
end
