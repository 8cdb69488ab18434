-- remove: delete proxies from the pool and every ready, quarantine,
-- lease, clearance and busy entry, and bump the version so every ready
-- set resyncs on its next lease.
--
-- KEYS     as lua/lib/drop.lua states them
-- ARGV[1..] proxy ids
--
-- Returns how many proxies were in the pool.
--
-- lib: sets drop

local sets, sites = known_sets(KEYS[5])
local n = 0
for i = 1, #ARGV do
  n = n + drop(KEYS, sets, sites, ARGV[i])
end
unsync(KEYS[5], sets, KEYS[3])
return n
