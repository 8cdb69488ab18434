-- ack: acknowledge a batch's entries and count the rejected ones it
-- acknowledged (an entry acknowledged before, by a sink it was claimed
-- from, is not counted again).
--
-- KEYS[1]      the stream
-- KEYS[2]      the rejected counter
-- ARGV[1]      the group
-- ARGV[2]      n, how many of the entry IDs that follow are rejected
--              entries (they come first)
-- ARGV[3 ..]   the entry IDs
--
-- Returns {entries acknowledged, rejected entries acknowledged}.

-- ack(from, to) acknowledges the IDs ARGV[from .. to], 1000 at a time,
-- and returns how many were pending.
local function ack(from, to)
  local n = 0
  for i = from, to, 1000 do
    n = n + redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, i, math.min(i + 999, to)))
  end
  return n
end

local nrej = tonumber(ARGV[2])
local rej = ack(3, 2 + nrej)
local rest = ack(3 + nrej, #ARGV)
if rej > 0 then redis.call('INCRBY', KEYS[2], rej) end
return {rej + rest, rej}
