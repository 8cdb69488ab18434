-- import: add or replace proxies and drop others (a gateway's slots
-- beyond its new sessions), all or nothing, if each one's spec is still
-- the one the caller read, and bump the version so every ready set
-- resyncs on its next lease.
--
-- KEYS                 as lua/lib/drop.lua states them
-- ARGV[1]              w, how many proxies to write
-- ARGV[2 .. 1+4w]      quadruples: proxy id, spec JSON, class, the spec
--                      read ("" for none)
-- ARGV[2+4w ..]        pairs: id of a proxy to drop, the spec read
--
-- Returns the new version, or -2 when a proxy's spec is not the one read
-- (nothing changed: read again).
--
-- lib: sets drop

local drops = 2 + 4 * tonumber(ARGV[1])
for i = 2, drops - 1, 4 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 3] then return -2 end
end
for i = drops, #ARGV, 2 do
  if (redis.call('HGET', KEYS[1], ARGV[i]) or '') ~= ARGV[i + 1] then return -2 end
end
for i = 2, drops - 1, 4 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
end
local sets, sites = known_sets(KEYS[5])
for i = drops, #ARGV, 2 do
  drop(KEYS, sets, sites, ARGV[i])
end
return unsync(KEYS[5], sets, KEYS[3])
