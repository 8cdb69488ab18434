-- lease_request(now) reads the KEYS and ARGV the lease scripts share
-- (lease.lua, lease_proxy.lua state them) into one table, the argument of
-- the lease functions (take, busy_until, fenced, cleared, fresh_version).
local function lease_request(now)
  return {
    now = now,
    ready = KEYS[1], leases = KEYS[2], tokens = KEYS[3], proxies = KEYS[4],
    known = KEYS[5], quarantine = KEYS[6], busy = KEYS[7], epoch = KEYS[8],
    cleared = KEYS[9],
    ttl = tonumber(ARGV[2]), min_interval = tonumber(ARGV[3]),
    holder = ARGV[4], task = ARGV[5], field = ARGV[6], site = ARGV[7],
    exclusive = tonumber(ARGV[8]), cached = ARGV[9], fence = tonumber(ARGV[10]),
    clearance_wait = tonumber(ARGV[11]),
  }
end
