-- The pace learner (proxies/learn.go): a site's min_interval per (site,
-- class) learned from the answers, kept in its learned limit's HASH
-- (lua/lib/limit.lua) with these fields of its own:
--   probe    the pace the canaries try (ms); = value when not probing
--   floor    the fastest pace known too fast (ms; 0 none), floorat when
--   clean    clean answers of canaries at probe so far
--   prev     the pace before the last speed-up, prevat when it was made
--   c:<id>   a canary proxy → ms of its last answer (0: none yet)
--   ncanary  how many canaries there are
--   resume   ms when probing resumes after a slow-down (0: not held)
--   canaries, need, reprobe, step, hold: the learner's settings
--            (learn.go)
-- Every proxy keeps value (the safe pace); a few canaries try probe, a
-- step faster. need clean answers in a row at probe (each one counted
-- only if its request went out within probe of the answer before it, so
-- the site saw that gap: learn_clean) make probe the pace and the next
-- probe a step faster. A 429
-- or ban at a pace faster than value ends the probe (floor: the limit is
-- slower); one at value slows every proxy at once: back to prev after a
-- recent speed-up, else 2.1 times the pace the lease ran at, and nothing is
-- probed for hold. A canary limited or banned stops being one. The floor
-- is forgotten after reprobe, so a site that loosens is found again.

-- next_probe(pace, floor, lo, step) is the next pace to try: a step
-- faster with no floor, else halfway to the floor (at most 10 % faster),
-- or pace once the floor is within 6 %.
local function next_probe(pace, floor, lo, step)
  if floor <= 0 then return math.max(lo, math.floor(pace * step / 1000)) end
  if pace - floor <= pace * 0.06 then return pace end
  return math.max(lo, math.floor((pace + floor) / 2), math.floor(pace * 0.9))
end

-- learned_pace(key, id, fallback) is the pace a lease of proxy id runs
-- at: probe for a canary while probing, else value (fallback ms while
-- the HASH is missing). A proxy leased while there are fewer canaries
-- than wanted becomes one.
local function learned_pace(key, id, fallback)
  local v = redis.call('HMGET', key, 'value', 'probe', 'c:' .. id, 'pinned', 'ncanary', 'canaries')
  local pace = tonumber(v[1])
  if not pace then return fallback end
  local probe = tonumber(v[2] or pace)
  if v[4] == '1' or probe >= pace then return pace end
  if v[3] then return probe end
  if tonumber(v[5] or 0) < tonumber(v[6] or 0) then
    redis.call('HSET', key, 'c:' .. id, 0)
    redis.call('HINCRBY', key, 'ncanary', 1)
    return probe
  end
  return pace
end

-- learn_state(key, id) reads the learner's fields for an answer of id.
local function learn_state(key, id)
  local v = redis.call('HMGET', key, 'value', 'probe', 'floor', 'floorat', 'clean', 'pinned',
    'c:' .. id, 'need', 'reprobe', 'min', 'step', 'prev', 'prevat', 'resume', 'hold')
  if not v[1] then return nil end
  local S = {pace = tonumber(v[1]), floor = tonumber(v[3] or 0), floorat = tonumber(v[4] or 0),
    clean = tonumber(v[5] or 0), pinned = v[6] == '1', last = v[7] and tonumber(v[7]),
    need = tonumber(v[8] or 8), reprobe = tonumber(v[9] or 600000), lo = tonumber(v[10]),
    step = tonumber(v[11] or 750), prev = tonumber(v[12] or 0), prevat = tonumber(v[13] or 0),
    resume = tonumber(v[14] or 0), hold = tonumber(v[15] or 120000)}
  S.probe = tonumber(v[2] or S.pace)
  return S
end

-- push_ready(ready, now, old, new) moves the ready-at of every proxy of
-- the ready set that sent within the new pace (new ms) later by the
-- slow-down (new - old), so the next lease of each, anywhere, is spaced
-- by the new pace from its last request, not the old one. O(N) in the
-- proxies that sent lately, on a slow-down only.
local function push_ready(ready, now, old, new)
  local r = redis.call('ZRANGEBYSCORE', ready, now - new, '+inf', 'WITHSCORES')
  for i = 1, #r, 2 do
    redis.call('ZADD', ready, 'XX', tonumber(r[i + 1]) + new - old, r[i])
  end
end

-- respace(key, ready, pace) moves the ready-at of every canary that last
-- answered sooner than pace (ms) ago and is ready before pace after that
-- answer: its last release spaced it by a faster probe, and its next
-- lease runs at pace now (learned_pace), so without this the site would
-- see the old probe's gap and a 429 of it would be blamed on pace (at
-- the safe pace: every proxy slowed for a probe's fault). Called when
-- the probe, or the pace, gets slower. O(fields of the HASH): a few
-- settings and the canaries.
local function respace(key, ready, pace)
  local f = redis.call('HGETALL', key)
  for i = 1, #f, 2 do
    local t = string.sub(f[i], 1, 2) == 'c:' and tonumber(f[i + 1]) or 0
    if t > 0 then
      local id, at = string.sub(f[i], 3), t + 1 + pace
      local r = tonumber(redis.call('ZSCORE', ready, id) or '')
      if r and r < at then redis.call('ZADD', ready, 'XX', at, id) end
    end
  end
end

-- learn_slow(key, log, ready, now, S, kind, used) is a 429 or ban at the
-- pace used: the probe ends, or every proxy slows.
local function learn_slow(key, log, ready, now, S, kind, used)
  local what = kind == 'banned' and 'ban' or '429'
  if used < S.pace then
    -- a probe that failed; or, while probing is held (resume), a lease
    -- of the pace before a slow-down answered late: the floor only
    S.floor = math.max(S.floor, used)
    local probe = S.probe
    if S.resume == 0 then probe = next_probe(S.pace, S.floor, S.lo, S.step) end
    redis.call('HSET', key, 'floor', S.floor, 'floorat', now, 'clean', 0, 'lastprobe', now .. '|' .. what .. ' at ' .. used .. ' ms',
      'probe', probe)
    if probe > S.probe then respace(key, ready, probe) end
    return S.pace
  end
  -- 2.1x, not 2x: a pace found clean at the edge of the limit was clean
  -- by its latency, and a site that doubles its gap would still limit
  -- twice that pace now and then
  local to, why = math.floor(2.1 * used), what .. ' at ' .. used .. ' ms: 2.1x slower'
  if S.prev > S.pace and used == S.pace and now - S.prevat < 120000 then
    to, why = S.prev, what .. ' at ' .. used .. ' ms: back to ' .. S.prev .. ' ms'
  end
  local pace, moved = limit_set(key, log, now, to, why)
  if moved and pace > S.pace then
    push_ready(ready, now, S.pace, pace)
    respace(key, ready, pace)
  end
  -- hold: the site just tightened; probe again only after hold
  redis.call('HSET', key, 'floor', used, 'floorat', now, 'clean', 0, 'prev', 0,
    'probe', pace, 'resume', now + S.hold)
  return pace
end

-- learn_clean(key, log, now, S, id, used, sent, paced) counts a canary's
-- clean answers at probe: the lease's first request if it went out
-- within probe (10 % and 15 ms over, as proxies.PacedSlack) of the
-- canary's last answer (now - sent; without sent, the answer itself must
-- have come within that: its latency and the work on it counted against
-- it, so under load few did), and the paced later requests of the lease.
-- A lease whose first request waited longer says nothing about its
-- first gap: the site saw a slower pace.
local function learn_clean(key, log, now, S, id, used, sent, paced)
  redis.call('HSET', key, 'c:' .. id, now)
  if used ~= S.probe or S.probe >= S.pace or not S.last or S.last <= 0 then return S.probe end
  local n, first = paced, now
  if sent then first = now - sent end
  if first - S.last <= used * 1.1 + 15 then n = n + 1 end
  if n <= 0 then return S.probe end
  S.clean = S.clean + n
  if S.clean < S.need then
    redis.call('HSET', key, 'clean', S.clean)
    return S.probe
  end
  local old = S.pace
  local pace = limit_set(key, log, now, S.probe, S.need .. ' clean answers at ' .. S.probe .. ' ms')
  local probe = next_probe(pace, S.floor, S.lo, S.step)
  redis.call('HSET', key, 'clean', 0, 'probe', probe, 'prev', old, 'prevat', now)
  return probe
end

-- learn(key, log, ready, now, id, kind, used, sent, paced) is the
-- learner's step for one answer of proxy id, whose lease ran at pace used
-- (ms); ready is the ready set of the pace's (site, class); sent and
-- paced an ok lease's evidence (learn_clean). Returns the pace proxy id
-- keeps now (its ready-at is the answer plus that).
local function learn(key, log, ready, now, id, kind, used, sent, paced)
  local S = learn_state(key, id)
  if not S then return used end
  if S.pinned then return S.pace end
  if S.resume > 0 and now >= S.resume then
    S.probe, S.resume = next_probe(S.pace, S.floor, S.lo, S.step), 0
    redis.call('HSET', key, 'probe', S.probe, 'resume', 0, 'clean', 0)
  end
  if S.floor > 0 and now - S.floorat > S.reprobe and S.resume == 0 then
    S.floor, S.probe = 0, next_probe(S.pace, 0, S.lo, S.step)
    redis.call('HSET', key, 'floor', 0, 'probe', S.probe, 'clean', 0)
  end
  if kind == 'rate_limited' or kind == 'banned' then
    if S.last then -- a canary that hit the limit rests; another probes
      redis.call('HDEL', key, 'c:' .. id)
      redis.call('HINCRBY', key, 'ncanary', -1)
    end
    return learn_slow(key, log, ready, now, S, kind, used)
  end
  if not S.last then return S.pace end
  if kind == 'ok' then return learn_clean(key, log, now, S, id, used, sent, paced or 0) end
  if kind == 'failed' then
    redis.call('HDEL', key, 'c:' .. id)
    redis.call('HINCRBY', key, 'ncanary', -1)
  end
  return S.pace
end
