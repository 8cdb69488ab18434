-- A gateway slot is paced by the exit IP it lands on, not as an IP of
-- its own: the site sees the exit, and slots outnumbering the exits
-- share them. exit_hold.lua records each slot's exit (L.slot_exit, and
-- inverted in L.exit_slots); a lease skips a slot whose exit another
-- session holds or that rests (its session would find it busy and take
-- a new session id: a probe, and another slot's exit), and taking a slot
-- pushes the other slots on its exit a pace out, until its session holds
-- the exit. A slot whose exit is quarantined is taken: its session takes
-- a new session id. A pool with no gateway slots costs one EXISTS per
-- call.

-- any_slot_exit(L) says whether any slot of the site has an exit
-- recorded, asked once per call.
local function any_slot_exit(L)
  if L.any_slot_exit == nil then L.any_slot_exit = redis.call('EXISTS', L.slot_exit) == 1 end
  return L.any_slot_exit
end

-- slot_pace(L) is the pace a slot's exit rests after a hold: the site's
-- min_interval, or the learned pace (its value, without a canary's).
local function slot_pace(L)
  local mi = L.min_interval
  if string.byte(mi) ~= 45 then return tonumber(mi) end -- '-': learned
  return tonumber(redis.call('HGET', L.pace, 'value') or -mi)
end

-- slot_exit_until(L, id) is when gateway slot id's exit may be free for
-- the site, or nil when the slot has no exit recorded or it is free now.
-- A held exit rests a pace after its release, so not before now + pace.
-- The second value says id is fresh: a gateway slot with no exit
-- recorded while other slots of the site have one.
local function slot_exit_until(L, id)
  if not any_slot_exit(L) then return nil, false end
  local ip = redis.call('HGET', L.slot_exit, id)
  if not ip then
    local spec = redis.call('HGET', L.proxies, id)
    return nil, spec ~= false and string.find(spec, '"gateway":{', 1, true) ~= nil
  end
  local h = redis.call('HGET', L.exit_holds, ip)
  if h and tonumber(string.match(h, '^%d+|(%d+)|')) > L.now then return L.now + slot_pace(L), false end
  local r = tonumber(redis.call('ZSCORE', L.exit_ready, ip) or '0')
  if r > L.now then return r, false end
  return nil, false
end

-- take_slot(L, id, ver) is take for a proxy that may be a gateway slot:
-- the other slots on its exit, if it has one, are pushed the lease's
-- pace out (XX: a slot removed from the pool stays out).
local function take_slot(L, id, ver)
  local r = take(L, id, ver)
  if not any_slot_exit(L) then return r end
  local ip = redis.call('HGET', L.slot_exit, id)
  if not ip then return r end
  for s in string.gmatch(redis.call('HGET', L.exit_slots, ip) or '', '%S+') do
    if s ~= id then redis.call('ZADD', L.ready, 'XX', 'GT', L.now + r[7], s) end
  end
  return r
end

-- take_fresh(L, id, ver) takes fresh slot id to draw an exit: no other
-- fresh slot is taken until its first hold (exit_hold.lua) or, should
-- its session fail, a second or two paces.
local function take_fresh(L, id, ver)
  redis.call('SET', L.slot_draw, id, 'PX', math.max(1000, 2 * slot_pace(L)))
  return take(L, id, ver)
end
