package sessions

// RecordKey is the key of a task's stored session, for the tests.
var RecordKey = sessionKey
