package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.uber.org/zap"

	"crawlq/testbed"
)

// Run runs the demo: it starts the cluster, enqueues the job mix, shows
// progress until every job is done, cfg.Duration passes or ctx ends, then
// stops the workers and the dashboard, counts, and closes everything. An
// ended ctx (Ctrl-C) is not an error: the summary says "interrupted".
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c, err := startCluster(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer c.close()
	p := newProgress(cfg.Progress, cfg.Duration)
	if c.chrome == "" && !cfg.NoChallenge {
		p.notice("no chromium found (install it, or give --chrome PATH): the demo runs without JavaScript challenges")
	}
	dash, err := openDashboard(c, cfg, p)
	if err != nil {
		return nil, err
	}
	sum, err := crawl(ctx, c, cfg, p)
	if sum != nil && dash != nil {
		sum.Dashboard = dash.url
	}
	if err == nil {
		err = linger(ctx, cfg, p, dash, sum)
	}
	if derr := dash.stop(); derr != nil {
		cfg.Logger.Warn("dashboard stop", zap.Error(derr))
	}
	return sum, err
}

// linger hands the summary to cfg.Done and, with KeepServing and a
// dashboard, keeps the dashboard (and the embedded Redis behind it)
// serving until ctx ends.
func linger(ctx context.Context, cfg Config, p *progress, dash *dashboard, sum *Summary) error {
	if cfg.Done != nil {
		if err := cfg.Done(sum); err != nil {
			return err
		}
	}
	if !cfg.KeepServing || dash == nil || ctx.Err() != nil {
		return nil
	}
	p.notice("dashboard still at %s; Ctrl-C to stop", dash.url)
	<-ctx.Done()
	return nil
}

// openDashboard starts the dashboard and tells where it is.
func openDashboard(c *cluster, cfg Config, p *progress) (*dashboard, error) {
	dash, moved, err := startDashboard(c, cfg)
	switch {
	case err != nil:
		return nil, err
	case dash == nil:
		return nil, nil
	case moved:
		p.notice("dashboard: %s is taken, using %s instead (Asynq UI at %smonitoring/)", cfg.Listen, dash.url, dash.url)
	default:
		p.notice("dashboard: %s (Asynq UI at %smonitoring/)", dash.url, dash.url)
	}
	return dash, nil
}

// crawl enqueues the mix, runs the workers while watching, stops them and
// sums up.
func crawl(ctx context.Context, c *cluster, cfg Config, p *progress) (*Summary, error) {
	jobs, err := planJobs(c, cfg.Mix)
	if err != nil {
		return nil, err
	}
	c.noResultJobs = countNoResult(c.tb.Catalog, jobs)
	start := time.Now()
	if _, err := c.enqueue(ctx, jobs); err != nil {
		return nil, err
	}
	c.postgres = cfg.Postgres
	sink := startSink(ctx, c, cfg)
	ws := startWorkers(c, cfg)
	end := watch(ctx, c, cfg, p, start)
	p.notice("demo: %s; stopping the workers", endReason(end))
	werr := ws.stop()
	rows, serr := sink.stop(context.WithoutCancel(ctx), c, cfg.Logger)
	sum, err := summarize(context.WithoutCancel(ctx), c, cfg, end, time.Since(start))
	if sum != nil {
		sum.Gateway = c.gatewaySummary(cfg, ws.exitCounts())
		sum.Modems = c.modemSummary(ws.modemCounts())
	}
	if sum != nil && sink != nil {
		sum.Observations = &rows
	}
	return sum, errors.Join(werr, serr, err)
}

// watch shows progress every cfg.Every until every job is done, the
// duration passes or ctx ends, and says which.
func watch(ctx context.Context, c *cluster, cfg Config, p *progress, start time.Time) string {
	deadline := time.NewTimer(cfg.Duration - time.Since(start))
	defer deadline.Stop()
	tick := time.NewTicker(cfg.Every)
	defer tick.Stop()
	for {
		c.challenges.sample(c.browsers)
		if s, err := c.snapshot(ctx); err != nil {
			cfg.Logger.Warn("demo: count jobs", zap.Error(err))
		} else {
			p.show(s, time.Since(start))
			if s.done() {
				return EndDone
			}
		}
		select {
		case <-ctx.Done():
			return EndInterrupted
		case <-deadline.C:
			return EndDuration
		case <-tick.C:
		}
	}
}

func endReason(end string) string {
	switch end {
	case EndDone:
		return "every job finished"
	case EndInterrupted:
		return "interrupted"
	}
	return "duration over"
}

// summarize counts the final state once the workers are stopped.
func summarize(ctx context.Context, c *cluster, cfg Config, end string, elapsed time.Duration) (*Summary, error) {
	s, err := c.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("final count: %w", err)
	}
	sum := &Summary{End: end, Elapsed: elapsed, ElapsedSeconds: math.Round(elapsed.Seconds()*1000) / 1000,
		Workers: cfg.Workers, Proxies: cfg.Proxies, Dead: max(cfg.Dead, 0), Flaky: max(cfg.Flaky, 0),
		Sites: map[string]SiteSummary{}}
	limits := c.tb.MinIntervals()
	var total SiteSummary
	for name, st := range s.Sites {
		st.MinInterval, st.SiteLimit = c.intervals[name], limits[name]
		sum.Sites[name] = st
		total.add(st)
	}
	sum.Jobs, sum.Completed, sum.Failed, sum.Unfinished = total.Jobs, total.Completed, total.Failed, total.Unfinished
	sum.Pages, sum.Items, sum.Blocked, sum.FailedAttempts = total.Pages, total.Items, total.Blocked, total.FailedAttempts
	sum.FingerprintRefusals, sum.HTTPSRequests = total.FingerprintRefusals, httpsRequests(c.tb.Log.Entries())
	sum.HeaderRefusals = c.tb.Log.HeaderRefusals()
	if sum.Failures, err = c.failures(); err != nil {
		return nil, err
	}
	checkInvariants(sum, c)
	sum.BrokerBans, sum.ProxyFailures = brokerCounts(ctx, c, cfg.Logger)
	sum.NoResultJobs = c.noResultJobs
	scoreBans(ctx, sum, c, cfg.Logger)
	sum.ChallengeMode = c.chrome != ""
	c.challenges.fill(&sum.ChallengeSummary, c.tb.Log, sum.Requests)
	quarantines(ctx, &sum.ChallengeSummary, c, cfg.Logger)
	return sum, nil
}

// httpsRequests counts the entries that came over TLS (they carry a JA4).
func httpsRequests(entries []testbed.Entry) int {
	n := 0
	for _, e := range entries {
		if e.JA4 != "" {
			n++
		}
	}
	return n
}

// checkInvariants fills the violations and bans from the testbed's log.
func checkInvariants(sum *Summary, c *cluster) {
	r := c.tb.Check()
	sum.I1Violations, sum.I2Violations, sum.Requests = r.I1Violations, r.I2Violations, r.Requests
	for _, n := range r.BansPerIP {
		sum.Bans += n
	}
}

// brokerCounts sums the broker's banned and failed counters (zeros if
// the stats cannot be read).
func brokerCounts(ctx context.Context, c *cluster, log *zap.Logger) (banned, failed int64) {
	st, err := c.broker.Stats(ctx)
	if err != nil {
		log.Warn("demo: pool stats", zap.Error(err))
		return 0, 0
	}
	for _, p := range st.Proxies {
		for _, ps := range p.Sites {
			banned, failed = banned+ps.Banned, failed+ps.Failed
		}
	}
	return banned, failed
}
