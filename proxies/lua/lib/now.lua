-- redis_now(skew) is the broker's clock: Redis TIME in milliseconds plus
-- skew, the broker's injected skew in ms (a number or a numeric string),
-- so servers with skewed clocks agree.
local function redis_now(skew)
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000) + skew
end
