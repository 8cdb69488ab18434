package sessions

// keyPrefix namespaces session records; one record per task ID. The
// hash tag {jobs} is the results stream's (tasks/results.JobsTag): a
// record is written in a page's transaction with the job's items and
// progress, which on Redis Cluster must touch one slot.
const keyPrefix = "crawlq:{jobs}:session:"

// sessionKey is the Redis STRING holding a task's stored session (JSON).
func sessionKey(task string) string { return keyPrefix + task }
