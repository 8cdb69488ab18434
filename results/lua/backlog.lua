-- backlog: read the stream's length and, when a sink marked it, the
-- entries its group has not acknowledged: pending plus not yet delivered
-- (the group's lag; the stream's length when Redis cannot tell it).
--
-- KEYS[1]  the stream
-- KEYS[2]  the sink marker
-- KEYS[3]  the rejected counter
-- ARGV[1]  the group
--
-- Returns {marked (0/1), length, unacknowledged, rejected}.
--
-- lib: group

local n = redis.call('XLEN', KEYS[1])
local rej = tonumber(redis.call('GET', KEYS[3]) or '0')
if redis.call('EXISTS', KEYS[2]) == 0 then return {0, n, 0, rej} end
local g = group_of(KEYS[1], ARGV[1])
if not g then return {1, n, n, rej} end
local lag = g['lag']
if type(lag) ~= 'number' then return {1, n, n, rej} end
return {1, n, g['pending'] + lag, rej}
