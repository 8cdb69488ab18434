package schedule

// Every key of the package shares the hash tag {schedules}, so each
// transaction and script touches one Redis Cluster slot.
const (
	keyPrefix = "crawlq:{schedules}:"
	// keyDefs is a HASH: schedule name → its definition as JSON.
	keyDefs = keyPrefix + "defs"
	// keyPaused is a SET of the paused schedules' names.
	keyPaused = keyPrefix + "paused"
)

// keyState is the HASH of a schedule's runs (see the state* fields).
func keyState(name string) string { return keyPrefix + "state:" + name }

// Fields of a state HASH.
const (
	stateTick     = "tick"        // unix seconds of the last decided tick
	stateDecision = "decision"    // what was decided for it: run or skip
	stateRunTick  = "run_tick"    // unix seconds of the last run tick
	stateRunJobs  = "run_jobs"    // JSON []tasks.Queued of that run
	stateQueued   = "queued_tick" // unix seconds of the last tick whose jobs were all queued
	stateRuns     = "runs"        // ticks run
	stateSkipped  = "skipped"     // ticks skipped: the previous run still going
	stateSkipTick = "skip_tick"   // unix seconds of the last skipped tick
	stateEnqueued = "enqueued"    // jobs queued by all runs
	stateRefused  = "refused"     // enqueues refused as already queued (a second scheduler's)
)
