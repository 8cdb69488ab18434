-- import: add or replace proxies, all or nothing, if each one's spec is
-- still the one the caller read, and bump the version so every ready set
-- resyncs on its next lease.
--
-- KEYS[1]          proxies HASH
-- KEYS[2]          classes HASH
-- KEYS[3]          version
-- KEYS[4]          known HASH
-- KEYS[5 .. 4+n]   the ready ZSET of each known field
-- ARGV[1]          n, how many known fields
-- ARGV[2 .. 1+n]   the known fields
-- ARGV[2+n ..]     quadruples: proxy id, spec JSON, class, the spec read
--                  ("" for none)
--
-- Returns the new version; -1 when the known fields are not ARGV's, -2
-- when a proxy's spec is not the one read (nothing changed: read again).
--
-- lib: unsync

local nf = tonumber(ARGV[1])
local fields = slice(ARGV, 2, nf)
if not known_fields(KEYS[4], fields) then return -1 end
for i = 2 + nf, #ARGV, 4 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 3] then return -2 end
end
for i = 2 + nf, #ARGV, 4 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
return unsync(KEYS[4], fields, slice(KEYS, 5, nf), KEYS[3])
