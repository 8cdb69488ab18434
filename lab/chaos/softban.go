package chaos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	r.SoftBan = &testbed.SoftBan{Every: softBanEvery, Gap: softBanGap, For: softBanFor, Max: o.SoftBans, Pair: o.SoftBanPairs}
	return map[string]testbed.SiteRules{softBanSite: r}
}

// scoreBans measures the workers' quarantines against what the sites
// meant: false quarantines and missed soft bans.
func (r *run) scoreBans(ctx context.Context) {
	st, err := r.c.pool.Stats(ctx)
	if err != nil {
		r.c.log.Warn("pool stats for the ban score", zap.Error(err))
	}
	es := r.c.tb.Log.Entries()
	if r.c.o.KeepDir {
		keepLog(r.c.dir, es, r.c.log)
	}
	rep := truth.Score(es, st)
	r.rep.FalseQuarantines, r.rep.MissedSoftBans = rep.FalseQuarantines, rep.MissedSoftBans
	d := &r.rep.Details
	d.NoResultAnswers, d.SoftBannedAnswers = rep.NoResultAnswers, rep.SoftBannedAnswers
	d.NoResultJobs = r.c.o.NoResultJobs
}

// keepLog writes the testbed's request log into the kept run directory
// (requests.jsonl, one entry a line), so a missed soft ban can be found
// by its path afterwards.
func keepLog(dir string, es []testbed.Entry, log *zap.Logger) {
	f, err := os.Create(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		log.Warn("keep the request log", zap.Error(err))
		return
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, e := range es {
		if err := enc.Encode(e); err != nil {
			log.Warn("keep the request log", zap.Error(err))
			return
		}
	}
}
