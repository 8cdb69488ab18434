package demo

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/lab/truth"
	"crawlq/tasks"
	"crawlq/testbed"
)

// Soft bans of the demo: one every third eligible request of the soft-ban
// site, none within softBanGap of a soft-banned answer, each for
// softBanFor.
const (
	softBanEvery = 3
	// softBanGap covers a confirmation's wait for its second proxy (two
	// of Wildberries' 1 s min_intervals): no other IP is banned between a
	// soft-banned answer and its second opinion. With 400 ms, the bans of
	// IPs idling a min_interval overlapped; two soft-banned IPs then agreed
	// on a product's empty answer now and then (the job ended not found,
	// a missed soft ban): two IPs banned at once defeat a two-IP
	// confirmation, and the demo measures the one-at-a-time case.
	softBanGap = 2 * time.Second
	// softBanFor is shorter than the broker's least quarantine (30s), as
	// real soft bans are temporary.
	softBanFor = 20 * time.Second
)

// listPageSize is how many completed tasks emptyJobs reads at a time.
const listPageSize = 500

// asynqPage lists page n (from 1) of listPageSize tasks.
func asynqPage(n int) []asynq.ListOption {
	return []asynq.ListOption{asynq.PageSize(listPageSize), asynq.Page(n)}
}

// softBanRules gives cfg.SoftBanSite its default anti-bot rules plus soft
// bans (none when cfg.SoftBans is negative).
func softBanRules(cfg Config) map[string]testbed.SiteRules {
	if cfg.SoftBans <= 0 {
		return nil
	}
	r := testbed.DefaultRules()[cfg.SoftBanSite]
	r.SoftBan = &testbed.SoftBan{Every: softBanEvery, Gap: softBanGap, For: softBanFor, Max: cfg.SoftBans}
	return map[string]testbed.SiteRules{cfg.SoftBanSite: r}
}

// confirmCounter counts the workers' confirmations by decision and their
// extra requests. Safe for concurrent use.
type confirmCounter struct {
	mu       sync.Mutex
	n        map[detect.Decision]int
	requests int
	// witnessBans are the witnesses whose control came back empty, in
	// every confirmation (deferred ones too): each such control answer is
	// a soft-banned answer of its own.
	witnessBans int
}

// add counts one decided confirmation (tasks.WorkerConfig.OnConfirm): a
// deferred one is decided by the job's next attempt, counted then.
func (c *confirmCounter) add(s tasks.ConfirmStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.witnessBans += s.WitnessBans
	if s.Deferred {
		return
	}
	if c.n == nil {
		c.n = map[detect.Decision]int{}
	}
	c.n[s.Decision]++
	c.requests += s.Requests
}

// counts returns the confirmations, their extra requests and the count
// per decision.
func (c *confirmCounter) counts() (total, requests int, byDecision map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byDecision = map[string]int{}
	for d, n := range c.n {
		total += n
		byDecision[d.String()] = n
	}
	return total, c.requests, byDecision
}

// bannedWitnesses is how many witnesses' controls came back empty.
func (c *confirmCounter) bannedWitnesses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.witnessBans
}

// scoreBans fills the ban-handling figures: what the sites meant against
// what the crawl quarantined, the confirmations and their cost, and the
// jobs that completed empty.
func scoreBans(ctx context.Context, sum *Summary, c *cluster, log *zap.Logger) {
	st, err := c.broker.Stats(ctx)
	if err != nil {
		log.Warn("demo: pool stats", zap.Error(err))
	}
	r := truth.Score(c.tb.Log.Entries(), st)
	sum.FalseQuarantines, sum.MissedSoftBans = r.FalseQuarantines, r.MissedSoftBans
	sum.NoResultAnswers, sum.SoftBannedAnswers = r.NoResultAnswers, r.SoftBannedAnswers
	sum.Confirmations, sum.ConfirmRequests, sum.ConfirmDecisions = c.confirms.counts()
	sum.WitnessBans = c.confirms.bannedWitnesses()
	if sum.Requests > 0 {
		sum.ConfirmShare = math.Round(float64(sum.ConfirmRequests)/float64(sum.Requests)*10000) / 10000
	}
	sum.EmptyJobs = c.emptyJobs(log)
}

// emptyJobs counts the completed jobs whose result says they found nothing.
func (c *cluster) emptyJobs(log *zap.Logger) int {
	n := 0
	for _, q := range c.queues() {
		for page := 1; ; page++ {
			infos, err := c.insp.ListCompletedTasks(q, asynqPage(page)...)
			if err != nil {
				log.Warn("demo: completed tasks", zap.String("queue", q), zap.Error(err))
				break
			}
			for _, info := range infos {
				var s tasks.Summary
				if json.Unmarshal(info.Result, &s) == nil && s.Empty {
					n++
				}
			}
			if len(infos) < listPageSize {
				break
			}
		}
	}
	return n
}

// countNoResult counts the searches among jobs whose query matches nothing.
func countNoResult(cat *testbed.Catalog, jobs []tasks.Job) int {
	n := 0
	for _, j := range jobs {
		if j.Kind == "search" && len(cat.Matches(j.Site, j.Request.Query)) == 0 {
			n++
		}
	}
	return n
}
