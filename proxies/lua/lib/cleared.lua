-- cleared(L) is the lease script's first choice: a proxy that holds the
-- site's clearance (L.cleared, MarkCleared), so a JavaScript challenge
-- costs a browser visit per proxy, not per lease. It takes the first of
-- them (at most 64 looked at) that is ready now; with none ready, but one
-- not leased that is ready within the site's clearance wait
-- (L.clearance_wait ms), it answers not-ready until then, so the caller
-- waits for it rather than pay a new challenge; else nil: the usual
-- choice. A site no proxy holds a clearance of costs one ZRANGEBYSCORE of
-- a missing key. Needs take, busy_until, rotating_until and slotexit.
local function cleared(L)
  local now = L.now
  local ids = redis.call('ZRANGEBYSCORE', L.cleared, '(' .. now, '+inf', 'LIMIT', 0, 64)
  if #ids == 0 then return nil end
  local m = redis.call('ZRANGE', L.ready, 0, 0)
  if string.byte(m[1] or '') ~= 35 then return {-2} end -- no '#' marker
  local soon
  for _, id in ipairs(ids) do
    local s = redis.call('ZSCORE', L.ready, id)
    s = s and tonumber(s)
    if s and s <= now then
      if not busy_until(L, id) and not rotating_until(L, id) and not slot_exit_until(L, id) then return take_slot(L, id, m[1]) end
    elseif s and s <= now + L.clearance_wait and (not soon or s < soon) and redis.call('HEXISTS', L.leases, id) == 0 then
      soon = s
    end
  end
  if soon then return {0, soon, now, 0, 0} end
  return nil
end
