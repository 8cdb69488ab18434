-- The scripts that touch every ready set leases have used (import,
-- remove, unban, quarantines and the rotation's) are given the known HASH and list
-- the sets from it in the same call, so no round trip reads them first.
-- Each set's keys are built from the known HASH's own name: its prefix
-- "crawlq:{<pool>}:" carries the pool's hash tag, so every key built is
-- in the slot of the keys given (Redis Cluster routes by those).
-- proxies/keys.go builds the same names (TestLuaKeysMatchGo).

-- known_sets(known) lists the (site, class) fields of the known HASH
-- known, sorted: each a table of field, site, class and the keys ready,
-- quarantine (the set's) and leases, cleared, stats (its site's); and
-- the sites once each, each a table of site, leases, cleared, stats.
local function known_sets(known)
  local prefix = string.sub(known, 1, #known - #'known')
  local fields = redis.call('HKEYS', known)
  table.sort(fields)
  local sets, sites, seen = {}, {}, {}
  for i, f in ipairs(fields) do
    local t = string.find(f, '\t', 1, true)
    local site, class = string.sub(f, 1, t - 1), string.sub(f, t + 1)
    local s = {field = f, site = site, class = class,
      ready = prefix .. 'ready:' .. site .. ':' .. class,
      quarantine = prefix .. 'quar:' .. site .. ':' .. class,
      leases = prefix .. 'lease:' .. site, cleared = prefix .. 'cleared:' .. site,
      stats = prefix .. 'stats:' .. site}
    sets[i] = s
    if not seen[site] then
      seen[site] = true
      sites[#sites + 1] = s
    end
  end
  return sets, sites
end
