-- Provenance: module github.com/kedacore/keda/v2@v2.21.1 (go mod download -json github.com/kedacore/keda/v2@v2.21.1),
-- file pkg/scalers/redis_scaler.go, NewRedisScaler's luaScript (lines 124-136), copied verbatim
-- below this header on 2026-12-06. KEDA's redis, redis-sentinel and redis-cluster scalers run it
-- with KEYS[1] = the trigger's listName and compare the count with listLength.
		local listName = KEYS[1]
		local listType = redis.call('type', listName).ok
		if listType == 'zset' then
			return redis.call('zcard', listName)
		elseif listType == 'set' then
			return redis.call('scard', listName)
		elseif listType == 'hash' then
			return redis.call('hlen', listName)
		elseif listType == 'list' or listType == 'none' then
			return redis.call('llen', listName)
		else
			return redis.error_reply('ERR unsupported key type: ' .. listType)
		end
