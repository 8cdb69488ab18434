-- exit_hold: hold an exit IP for a site, so I1 and I2 hold on the IP the
-- site sees whatever endpoint or gateway session reaches it. Granted when
-- the IP is not quarantined for the site and no other live hold has it;
-- the holder may send from the IP's ready-at on. (A live hold is renewed
-- by exit_renew.lua.)
--
-- KEYS[1]  holds HASH (site): ip -> "token|expiry-ms|holder"
-- KEYS[2]  ready ZSET (site): ip -> ready-at ms
-- KEYS[3]  quarantine ZSET (site): ip -> end ms
-- KEYS[4]  token counter
-- KEYS[5]  seen HLL (site): the exit IPs ever held
-- KEYS[6]  slot exit HASH (site): gateway slot id -> exit IP of its last
--          hold (lua/lib/slotexit.lua, read by the lease scripts)
-- KEYS[7]  exit slots HASH (site): exit IP -> the slots on it, by spaces
-- KEYS[8]  slot draw STRING (site): a fresh slot's draw in flight, ended
--          by its first hold (lua/lib/slotexit.lua)
-- ARGV[1]  skew ms
-- ARGV[2]  ip
-- ARGV[3]  holder
-- ARGV[4]  ttl ms
-- ARGV[5]  min_interval ms
-- ARGV[6]  the gateway slot (proxy id) the session is on, "" for none
--
-- Returns {1, token, now, expiry, not-before} | {0, 'busy', until, now}
-- | {0, 'quarantined', until, now}.
--
-- lib: now

-- note_slot_exit(slot_exit, exit_slots, draw, slot, ip) records that
-- gateway slot's hold is on ip, so its next lease is paced by ip; a
-- slot's first hold ends the draw in flight.
local function note_slot_exit(slot_exit, exit_slots, draw, slot, ip)
  local old = redis.call('HGET', slot_exit, slot)
  if old == ip then return end
  redis.call('HSET', slot_exit, slot, ip)
  if not old then redis.call('DEL', draw) end
  if old then
    local rest = {}
    for s in string.gmatch(redis.call('HGET', exit_slots, old) or '', '%S+') do
      if s ~= slot then rest[#rest + 1] = s end
    end
    if #rest == 0 then redis.call('HDEL', exit_slots, old) else redis.call('HSET', exit_slots, old, table.concat(rest, ' ')) end
  end
  local cur = redis.call('HGET', exit_slots, ip)
  if cur then redis.call('HSET', exit_slots, ip, cur .. ' ' .. slot) else redis.call('HSET', exit_slots, ip, slot) end
end

local now = redis_now(ARGV[1])
local ip = ARGV[2]
local cur = redis.call('HGET', KEYS[1], ip)
local ready = tonumber(redis.call('ZSCORE', KEYS[2], ip) or '0')
local q = tonumber(redis.call('ZSCORE', KEYS[3], ip) or '0')
if q > now then return {0, 'quarantined', q, now} end
if cur then
  local exp = tonumber(string.match(cur, '^%d+|(%d+)|'))
  if exp > now then return {0, 'busy', exp, now} end
  -- its holder died: the IP rests min_interval after that hold's end
  ready = math.max(ready, exp + ARGV[5])
end
local tok = redis.call('INCR', KEYS[4])
local exp = now + ARGV[4]
redis.call('HSET', KEYS[1], ip, tok .. '|' .. exp .. '|' .. ARGV[3])
redis.call('PFADD', KEYS[5], ip)
if ARGV[6] ~= '' then note_slot_exit(KEYS[6], KEYS[7], KEYS[8], ARGV[6], ip) end
return {1, tok, now, exp, math.max(ready, now)}
