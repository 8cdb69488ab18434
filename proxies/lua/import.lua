-- import: add or replace proxies and drop others (a gateway's slots
-- beyond its new sessions), all or nothing, if each one's spec is still
-- the one the caller read, and bump the version so every ready set
-- resyncs on its next lease.
--
-- KEYS                   as lua/lib/drop.lua lays them out
-- ARGV[1]                n, how many known fields
-- ARGV[2 .. 1+n]         the known fields
-- ARGV[2+n]              w, how many proxies to write
-- ARGV[3+n .. 2+n+4w]    quadruples: proxy id, spec JSON, class, the spec
--                        read ("" for none)
-- ARGV[3+n+4w ..]        pairs: id of a proxy to drop, the spec read
--
-- Returns the new version; -1 when the known fields are not ARGV's, -2
-- when a proxy's spec is not the one read (nothing changed: read again).
--
-- lib: unsync drop

local nf = tonumber(ARGV[1])
local fields = slice(ARGV, 2, nf)
if not known_fields(KEYS[5], fields) then return -1 end
local first = 3 + nf
local drops = first + 4 * tonumber(ARGV[2 + nf])
for i = first, drops - 1, 4 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 3] then return -2 end
end
for i = drops, #ARGV, 2 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 1] then return -2 end
end
for i = first, drops - 1, 4 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
for i = drops, #ARGV, 2 do
  drop(KEYS, nf, ARGV[i])
end
return unsync(KEYS[5], fields, slice(KEYS, 6, nf), KEYS[3])
