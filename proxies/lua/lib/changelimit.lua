-- change_every(limit, configured) is the least ms between two changes of
-- a modem: its configured change_every, or its provider's interval
-- learned from refusals (the learned limit HASH limit, named
-- change:<provider>: proxies/modem_limit.go) where longer, or the one a
-- user pinned there.
local function change_every(limit, configured)
  configured = tonumber(configured)
  local c = redis.call('HMGET', limit, 'value', 'pinned')
  local v = tonumber(c[1])
  if not v then return configured end
  if c[2] == '1' then return v end
  return math.max(v, configured)
end
