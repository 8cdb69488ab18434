package sessions

// keyPrefix namespaces session records; one record per task ID.
const keyPrefix = "crawlq:session:"

// sessionKey is the Redis STRING holding a task's stored session (JSON).
func sessionKey(task string) string { return keyPrefix + task }
