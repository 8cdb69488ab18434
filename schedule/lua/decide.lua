-- decide: record the decision for a tick unless one was recorded for it
-- (or a later tick) already: the first scheduler to decide wins, the
-- others follow it.
--
-- KEYS[1]  the schedule's state HASH
-- ARGV[1]  the tick (unix s)
-- ARGV[2]  "run" or "skip"
-- ARGV[3]  the run's jobs (JSON)
--
-- Returns {"new"|"same"|"old", the tick's decision, "1" if its jobs are
-- all queued already}: "same" when this tick was decided before, "old"
-- when a later tick was.

local cur = tonumber(redis.call('HGET', KEYS[1], 'tick') or '0')
local tick = tonumber(ARGV[1])
if cur > tick then return {'old', '', '0'} end
if cur == tick then
  local queued = redis.call('HGET', KEYS[1], 'queued_tick') == ARGV[1]
  return {'same', redis.call('HGET', KEYS[1], 'decision') or '', queued and '1' or '0'}
end
redis.call('HSET', KEYS[1], 'tick', ARGV[1], 'decision', ARGV[2])
if ARGV[2] == 'run' then
  redis.call('HSET', KEYS[1], 'run_tick', ARGV[1], 'run_jobs', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'runs', 1)
else
  redis.call('HSET', KEYS[1], 'skip_tick', ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'skipped', 1)
end
return {'new', ARGV[2], '0'}
