package sessions

// RecordKey is the key of a task's stored session, for the tests.
var RecordKey = sessionKey

// KeptKey is the key of the Suspect answer a task's deferred confirmation
// kept, for the tests.
var KeptKey = keptKey
