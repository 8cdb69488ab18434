-- remove: delete proxies from the pool and every ready, quarantine,
-- lease, clearance and busy entry, and bump the version so every ready
-- set resyncs on its next lease.
--
-- KEYS                 as lua/lib/drop.lua lays them out
-- ARGV[1]              n, how many known fields
-- ARGV[2 .. 1+n]       the known fields
-- ARGV[2+n ..]         proxy ids
--
-- Returns how many proxies were in the pool, or -1 when the known fields
-- are not ARGV's (nothing changed: read again).
--
-- lib: unsync drop

local nf = tonumber(ARGV[1])
local fields = slice(ARGV, 2, nf)
if not known_fields(KEYS[5], fields) then return -1 end
local n = 0
for i = 2 + nf, #ARGV do
  n = n + drop(KEYS, nf, ARGV[i])
end
unsync(KEYS[5], fields, slice(KEYS, 6, nf), KEYS[3])
return n
