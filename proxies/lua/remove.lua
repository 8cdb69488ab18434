-- remove: delete proxies from the pool and every ready, quarantine,
-- lease, clearance and busy entry, and bump the version so every ready
-- set resyncs on its next lease.
--
-- KEYS[1]              proxies HASH
-- KEYS[2]              classes HASH
-- KEYS[3]              version
-- KEYS[4]              busy HASH
-- KEYS[5]              known HASH
-- KEYS[6 .. 5+n]       the ready ZSET of each known field
-- KEYS[6+n .. 5+2n]    the quarantine ZSET of each known field
-- KEYS[6+2n ..]        per site: its leases HASH, then its cleared ZSET
-- ARGV[1]              n, how many known fields
-- ARGV[2 .. 1+n]       the known fields
-- ARGV[2+n ..]         proxy ids
--
-- Returns how many proxies were in the pool, or -1 when the known fields
-- are not ARGV's (nothing changed: read again).
--
-- lib: unsync

local nf = tonumber(ARGV[1])
local fields = slice(ARGV, 2, nf)
if not known_fields(KEYS[5], fields) then return -1 end
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
unsync(KEYS[5], fields, slice(KEYS, 6, nf), KEYS[3])
return n
