-- wake: bring a job handed back (tasks.Waker) from its queue's retry set
-- to its pending list at its turn, as Asynq's Inspector.RunTask does,
-- but only while the job still waits in the retry set for a turn due by
-- then. RunTask moves a task of any state but active and pending: a wake
-- of an earlier hand-back would run again a job that has completed since
-- (its retained record sits in the completed set) or pull a later turn
-- forward. Asynq v0.26's keys; the retry set's scores are due times in
-- unix seconds.
--
-- KEYS[1]  the task HASH (asynq:{queue}:t:<id>)
-- KEYS[2]  the queue's retry ZSET (asynq:{queue}:retry)
-- KEYS[3]  the queue's pending LIST (asynq:{queue}:pending)
-- ARGV[1]  task id
-- ARGV[2]  the latest due time (unix s) this wake moves
--
-- Returns 1 moved, 0 not (gone, not in the retry set, or due later).

if redis.call('HGET', KEYS[1], 'state') ~= 'retry' then return 0 end
local due = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('LPUSH', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending')
return 1
