-- set_paused: pause or resume a schedule, if it exists.
--
-- KEYS[1]  defs HASH
-- KEYS[2]  paused SET
-- ARGV[1]  the schedule's name
-- ARGV[2]  "1" to pause, "0" to resume
--
-- Returns 0 if the schedule does not exist, else 1.

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[2], ARGV[1])
else
  redis.call('SREM', KEYS[2], ARGV[1])
end
return 1
