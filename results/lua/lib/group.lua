-- group_of(stream, name) is stream's consumer group called name, from
-- XINFO GROUPS: a table of its fields ('last-delivered-id', 'pending',
-- 'lag', ...); nil when the stream or the group does not exist.
local function group_of(stream, name)
  if redis.call('EXISTS', stream) == 0 then return nil end
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local f = {}
    for i = 1, #g, 2 do f[g[i]] = g[i+1] end
    if f['name'] == name then return f end
  end
  return nil
end
