package chaos

import (
	"context"
	"time"

	"go.uber.org/zap"

	"crawlq/lab/truth"
	"crawlq/testbed"
)

// Soft bans of a chaos run: on Wildberries, one every third eligible
// request, none within softBanGap of a soft-banned answer, each for
// softBanFor.
const (
	softBanSite  = testbed.SiteWildberries
	softBanEvery = 3
	softBanGap   = 400 * time.Millisecond
	// softBanFor is shorter than the broker's least quarantine (30s), as
	// real soft bans are temporary: a banned IP back from quarantine is
	// clean again.
	softBanFor = 20 * time.Second
)

// softBanRules gives the soft-ban site its default rules plus soft bans.
func softBanRules(o Options) map[string]testbed.SiteRules {
	r := testbed.DefaultRules()[softBanSite]
	r.SoftBan = &testbed.SoftBan{Every: softBanEvery, Gap: softBanGap, For: softBanFor, Max: o.SoftBans}
	return map[string]testbed.SiteRules{softBanSite: r}
}

// scoreBans measures the workers' quarantines against what the sites
// meant: false quarantines and missed soft bans.
func (r *run) scoreBans(ctx context.Context) {
	st, err := r.c.pool.Stats(ctx)
	if err != nil {
		r.c.log.Warn("pool stats for the ban score", zap.Error(err))
	}
	rep := truth.Score(r.c.tb.Log.Entries(), st)
	r.rep.FalseQuarantines, r.rep.MissedSoftBans = rep.FalseQuarantines, rep.MissedSoftBans
	d := &r.rep.Details
	d.NoResultAnswers, d.SoftBannedAnswers = rep.NoResultAnswers, rep.SoftBannedAnswers
	d.NoResultJobs = r.c.o.NoResultJobs
}
