-- append: append a page's items to the results stream, trimming it by
-- MAXLEN only when no durable sink marked it.
--
-- KEYS[1]      the stream
-- KEYS[2]      the sink marker
-- ARGV[1]      MAXLEN bound
-- ARGV[2]      task ID
-- ARGV[3]      schedule ("" for none)
-- ARGV[4 ..]   pairs: an item's site, its JSON
--
-- Returns 1 when a sink marked the stream, else 0.

local sink = redis.call('EXISTS', KEYS[2]) == 1
for i = 4, #ARGV, 2 do
  local f = {'site', ARGV[i], 'task', ARGV[2]}
  if ARGV[3] ~= '' then f[#f+1] = 'schedule'; f[#f+1] = ARGV[3] end
  f[#f+1] = 'item'; f[#f+1] = ARGV[i+1]
  if sink then
    redis.call('XADD', KEYS[1], '*', unpack(f))
  else
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(f))
  end
end
if sink then return 1 end
return 0
