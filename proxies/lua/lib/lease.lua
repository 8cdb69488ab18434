-- lease_request(now) reads the KEYS and ARGV the lease scripts share
-- (lease.lua, lease_proxy.lua state them) into one table, the argument of
-- the lease functions (take, busy_until, fenced, cleared, fresh_version).
-- The numbers stay strings, as Redis passes them (Lua's arithmetic takes
-- them as numbers; tonumber on each would cost the hot path): compare
-- exclusive with '0' and fence with '-1'.
local function lease_request(now)
  return {
    now = now,
    ready = KEYS[1], leases = KEYS[2], tokens = KEYS[3], proxies = KEYS[4],
    known = KEYS[5], quarantine = KEYS[6], busy = KEYS[7], epoch = KEYS[8],
    cleared = KEYS[9], rotating = KEYS[10], pace = KEYS[11],
    slot_exit = KEYS[12], exit_slots = KEYS[13], exit_holds = KEYS[14], exit_ready = KEYS[15],
    slot_draw = KEYS[16],
    ttl = ARGV[2], min_interval = ARGV[3],
    holder = ARGV[4], task = ARGV[5], field = ARGV[6], site = ARGV[7],
    exclusive = ARGV[8], cached = ARGV[9], fence = ARGV[10],
    clearance_wait = ARGV[11],
  }
end
