package chaos

import (
	"fmt"
	"time"
)

// Result is the chaos run's one JSON line. The goals: Lost, I1Violations,
// I2Violations, StuckLeases and DuplicateItems all 0.
type Result struct {
	// Jobs is the number of jobs enqueued.
	Jobs int `json:"jobs"`
	// Completed and Archived count the jobs in those final states.
	Completed int `json:"completed"`
	Archived  int `json:"archived"`
	// Lost counts enqueued jobs that are neither completed, archived nor
	// still queued: they disappeared.
	Lost int `json:"lost"`
	// I1Violations and I2Violations are what the testbed's sites saw: one
	// IP sending twice at once, or faster than the site's min interval.
	I1Violations int `json:"i1_violations"`
	I2Violations int `json:"i2_violations"`
	// StuckLeases counts leases the broker still reports one lease TTL
	// after the last job, with every worker idle.
	StuckLeases int `json:"stuck_leases"`
	// DuplicateItems counts results-stream records beyond the first of
	// each (site, id). The jobs are chosen so that no two of them yield the
	// same item, so any repeat is a page written twice.
	DuplicateItems int `json:"duplicate_items"`
	// FalseQuarantines are quarantines of a proxy on a site that never
	// banned its IP; MissedSoftBans are soft-banned answers taken as true
	// results (no quarantine followed them). Both are measured against
	// the testbed's truth.
	FalseQuarantines int64 `json:"false_quarantines"`
	MissedSoftBans   int   `json:"missed_soft_bans"`
	// ObservationsMissing and ObservationsDuplicated are, in a run with a
	// sink (Options.Postgres), the items the testbed served to completed
	// jobs (the plan's items, from the testbed catalog) that have no row
	// in PostgreSQL's observations, and the rows beyond the first of each
	// (site, id). Absent without a sink.
	ObservationsMissing    *int `json:"observations_missing,omitempty"`
	ObservationsDuplicated *int `json:"observations_duplicated,omitempty"`
}

// Details is the second JSON line: timings and the counts behind Result.
type Details struct {
	// DurationS is the whole run, setup and cleanup included.
	DurationS float64 `json:"duration_s"`
	// SetupS is the time to start Redis, the testbed and import the farm.
	SetupS float64 `json:"setup_s"`
	// CrawlS is from the first enqueue until every job was finished.
	CrawlS float64       `json:"crawl_s"`
	Faults []FaultTiming `json:"faults"`
	// Unfinished counts jobs still queued, active or retrying when the
	// run's deadline passed.
	Unfinished int `json:"unfinished"`
	// ArchivedWithoutReason counts archived jobs with an empty last error.
	ArchivedWithoutReason int `json:"archived_without_reason"`
	// ArchivedReasons counts archived jobs by their last error.
	ArchivedReasons map[string]int `json:"archived_reasons,omitempty"`
	// Items is the number of records in the results stream.
	Items int `json:"items"`
	// MissingItems counts items of completed jobs absent from the stream.
	MissingItems int `json:"missing_items"`
	// UnexpectedItems counts stream items no job was meant to yield.
	UnexpectedItems int `json:"unexpected_items"`
	// Requests and Bans are the testbed sites' totals.
	Requests int `json:"requests"`
	Bans     int `json:"bans"`
	// BrokerBans counts the ban outcomes workers reported to the broker;
	// more than Bans means pages judged blocked that the sites served.
	BrokerBans int `json:"broker_bans"`
	// NoResultJobs are the searches for queries that match nothing;
	// EmptyJobs the jobs that completed with no items.
	NoResultJobs int `json:"no_result_jobs"`
	EmptyJobs    int `json:"empty_jobs"`
	// NoResultAnswers are the sites' answers that truly had no items;
	// SoftBannedAnswers those whose items a soft ban hid.
	NoResultAnswers   int `json:"no_result_answers"`
	SoftBannedAnswers int `json:"soft_banned_answers"`
	// Violations describes the first invariant violations.
	Violations []string `json:"violations,omitempty"`
	// StuckHolders names the holders of stuck leases.
	StuckHolders []string `json:"stuck_holders,omitempty"`
	// WorkerExits lists workers that died on their own or exited uncleanly.
	WorkerExits []string `json:"worker_exits,omitempty"`
	// Modems is the modems' record and the killed rotation; absent
	// without modems.
	Modems *ModemReport `json:"modems,omitempty"`
	// Learned is every learned limit at the end (name: value, changes),
	// with --learn-pace or --learn-volume.
	Learned []LearnedLimit `json:"learned,omitempty"`
	// Dir is the kept run directory (Options.KeepDir) with every log.
	Dir string `json:"dir,omitempty"`
}

// Report is a chaos run's outcome.
type Report struct {
	Result
	Details Details
}

// MinBanCases is the least number of no-result jobs and of soft-banned
// answers a run needs for its false_quarantines and missed_soft_bans to
// mean something.
const MinBanCases = 10

// RunLimit is the goal for a whole run's duration.
const RunLimit = 5 * time.Minute

// Failures lists every goal the run missed; empty means all were met.
func (r *Report) Failures() []string {
	var out []string
	add := func(bad bool, format string, args ...any) {
		if bad {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	d := r.Details
	add(r.Lost > 0, "%d jobs lost", r.Lost)
	add(r.I1Violations > 0, "%d I1 violations", r.I1Violations)
	add(r.I2Violations > 0, "%d I2 violations", r.I2Violations)
	add(r.StuckLeases > 0, "%d leases stuck after one lease TTL", r.StuckLeases)
	add(r.DuplicateItems > 0, "%d duplicate items", r.DuplicateItems)
	add(r.ObservationsMissing != nil && *r.ObservationsMissing > 0, "%d observations missing in PostgreSQL", deref(r.ObservationsMissing))
	add(r.ObservationsDuplicated != nil && *r.ObservationsDuplicated > 0, "%d observations duplicated in PostgreSQL", deref(r.ObservationsDuplicated))
	add(d.ArchivedWithoutReason > 0, "%d archived jobs without a reason", d.ArchivedWithoutReason)
	add(d.Unfinished > 0, "%d jobs unfinished at the deadline", d.Unfinished)
	add(d.MissingItems > 0, "%d items of completed jobs missing", d.MissingItems)
	add(r.FalseQuarantines > 0, "%d false quarantines", r.FalseQuarantines)
	add(r.MissedSoftBans > 0, "%d missed soft bans", r.MissedSoftBans)
	add(d.NoResultJobs < MinBanCases, "%d no-result jobs, goal at least %d", d.NoResultJobs, MinBanCases)
	add(d.SoftBannedAnswers < MinBanCases, "%d soft-banned answers, goal at least %d", d.SoftBannedAnswers, MinBanCases)
	add(len(d.WorkerExits) > 0, "workers exited: %v", d.WorkerExits)
	add(d.DurationS >= RunLimit.Seconds(), "run took %.0fs, goal under %s", d.DurationS, RunLimit)
	if m := d.Modems; m != nil {
		add(m.TooSoon > 0, "%d modem changes closer than the provider allows", m.TooSoon)
		add(m.WhileSettling > 0, "%d requests through a settling modem", m.WhileSettling)
		add(m.Killed != nil && m.Killed.RequestsAfterKill == 0, "modem %s never leased again after its rotation's worker was killed", killedModem(m.Killed))
	}
	for _, f := range d.Faults {
		add(!f.Fired, "fault %s never fired", f.Name)
		add(f.Error != "", "fault %s: %s", f.Name, f.Error)
	}
	return out
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// killedModem is the killed rotation's modem.
func killedModem(k *KilledRotation) string {
	if k == nil {
		return ""
	}
	return k.Modem
}
