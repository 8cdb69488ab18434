package sessions

// keyPrefix namespaces session records; one record per task ID. The
// hash tag {jobs} is the results stream's (results.JobsTag): a
// record is written in a page's transaction with the job's items and
// progress, which on Redis Cluster must touch one slot.
const keyPrefix = "crawlq:{jobs}:session:"

// sessionKey is the Redis STRING holding a task's stored session (JSON).
func sessionKey(task string) string { return keyPrefix + task }

// clearancePrefix namespaces the clearances of JavaScript challenges kept
// per (site, proxy).
const clearancePrefix = "crawlq:{jobs}:clearance:"

// clearanceKey is the Redis STRING holding the clearance a browser got for
// site through proxy (JSON: the profile and the cookies).
func clearanceKey(site, proxyID string) string { return clearancePrefix + site + ":" + proxyID }

// slotPrefix namespaces the provider sessions gateway slots keep between
// their sessions.
const slotPrefix = "crawlq:{jobs}:gwslot:"

// slotKey is the Redis STRING holding the provider session (JSON: session
// id, exit IP, start, last use) gateway slot proxyID's last session left,
// expiring when the provider may end it.
func slotKey(proxyID string) string { return slotPrefix + proxyID }

// keptPrefix namespaces the Suspect answers confirmations deferred to a
// task's next attempt, one per task.
const keptPrefix = "crawlq:{jobs}:kept:"

// keptKey is the Redis STRING holding the Suspect answer a task's
// confirmation kept for its next attempt (JSON).
func keptKey(task string) string { return keptPrefix + task }
