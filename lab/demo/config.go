package demo

import (
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"
)

// Config configures Run. Zero fields take the defaults named.
type Config struct {
	// Postgres, if set, runs a durable sink (pgsink) into this database
	// alongside the workers; the summary reports the rows it wrote.
	Postgres string
	// Duration bounds the run: the demo ends when every job is done or
	// when Duration has passed, whichever comes first. Default 2 minutes
	// (the default mix takes about 20s, some 55s with challenge mode).
	Duration time.Duration
	// Listen is the dashboard's address. If the port is taken, a free port
	// on the same host is used instead. Empty: no dashboard.
	Listen string
	// Proxies is the size of the proxy farm. Default 24.
	Proxies int
	// Dead and Flaky are how many farm proxies are dead and how many drop
	// a FlakyRate share of their connections. Defaults 2 and 2; a negative
	// count means none.
	Dead, Flaky int
	// GatewayExits and GatewaySessions are the gateway proxy the demo runs
	// beside the farm: its exit IPs and the session ids its line allows
	// (the pool gets that many slots). Defaults DefaultGatewayExits and
	// DefaultGatewaySessions; negative exits: no gateway.
	GatewayExits, GatewaySessions int
	// Modems is how many mobile modems (one exit IP at a time, changed by
	// a link) the demo runs beside the farm, imported with their change
	// links. Default DefaultModems; negative: none.
	Modems int
	// FlakyRate is the share of connections a flaky proxy drops. Default 0.3.
	FlakyRate float64
	// Seed makes the catalog, the job mix and the flaky drops repeatable.
	// Default 1.
	Seed int64
	// Mix is the jobs enqueued for every site. Default DefaultMix.
	Mix Mix
	// SoftBanSite is the site that soft-bans IPs during the run (a banned
	// IP gets the site's no-results answers). Default wildberries.
	SoftBanSite string
	// SoftBans is how many IPs SoftBanSite soft-bans, one every third
	// eligible request at most. Default DefaultSoftBans; negative: none.
	SoftBans int
	// Workers is the number of in-process workers, named demo-1, demo-2…
	// Default 3.
	Workers int
	// Concurrency is each worker's number of jobs run at once. Default 4.
	Concurrency int
	// Every is how often progress is polled and shown. Default 1s.
	Every time.Duration
	// Progress receives the live progress line and notices (stderr in the
	// command). Nil shows nothing.
	Progress io.Writer
	// Logger receives the workers' and dashboard's logs. Default: none.
	Logger *zap.Logger
	// KeepServing keeps the dashboard serving the final state after the
	// run ended (every job done or Duration over) until ctx ends (Ctrl-C),
	// so a newcomer who opens its URL late still finds it. Done is called
	// with the summary first. No effect without a dashboard or once ctx
	// ended.
	KeepServing bool
	// NoChallenge runs the sites without their JavaScript challenge. By
	// default the challenge is on when a Chromium is found (Chrome, or on
	// PATH); without one the demo says so and runs without it.
	NoChallenge bool
	// Chrome is the Chromium binary; default: found on PATH.
	Chrome string
	// Done, if set, gets the summary as soon as the run ends, before the
	// dashboard keeps serving (KeepServing).
	Done func(*Summary) error
}

// Mix is the set of jobs enqueued for each site.
type Mix struct {
	// Searches is the number of search jobs with follow per site; each
	// crawls up to Pages pages and enqueues the products it finds.
	Searches int
	// Pages is each search's page limit.
	Pages int
	// MinMatches and MaxMatches bound how many catalog products a search
	// query matches, so the number of followed jobs stays known.
	MinMatches, MaxMatches int
	// Products is the number of product (Avito: item) jobs per site
	// enqueued directly by URL, for products no search finds.
	Products int
	// Empty is the number of search jobs per site for queries that match
	// nothing (misspellings, goods the catalog lacks): true "no results".
	Empty int
}

// DefaultMix finishes well inside a minute on a two-core machine (about
// 20 seconds, some 365 jobs): per site three searches of 10 to 45
// products each, four direct products, and four searches with no
// results.
var DefaultMix = Mix{Searches: 3, Pages: 2, MinMatches: 10, MaxMatches: 45, Products: 4, Empty: 4}

// Defaults of Config.
const (
	DefaultDuration = 2 * time.Minute
	DefaultProxies  = 24
	// DefaultGatewayExits and DefaultGatewaySessions: a small gateway,
	// one session id per exit IP. Its sessions still land on held exits
	// (a re-rolled or expired session id draws a random exit), but never
	// more of them at once than there are exits: with 24 session ids on
	// the 8 exits the demo without challenges left 4 and 66 jobs
	// unfinished after 2 minutes, its sessions waiting for held exits
	// (10,000-25,000 waits and as many probes a run) where the sites'
	// min_intervals of 1-3 s keep each exit held long.
	DefaultGatewayExits    = 8
	DefaultGatewaySessions = 8
	DefaultWorkers         = 3
	// DefaultModems is two modems beside the farm.
	DefaultModems      = 2
	DefaultConcurrency = 4
	// DefaultSoftBans soft-bans enough IPs that both ban-handling counts
	// (false quarantines, missed soft bans) are exercised on every run.
	DefaultSoftBans = 12
)

func (c Config) withDefaults() Config {
	setDefault(&c.Duration, DefaultDuration)
	setDefault(&c.Every, time.Second)
	setDefault(&c.Proxies, DefaultProxies)
	setDefault(&c.GatewayExits, DefaultGatewayExits)
	setDefault(&c.GatewaySessions, DefaultGatewaySessions)
	setDefault(&c.Workers, DefaultWorkers)
	setDefault(&c.Modems, DefaultModems)
	setDefault(&c.Concurrency, DefaultConcurrency)
	setDefault(&c.Dead, 2)
	setDefault(&c.Flaky, 2)
	setDefault(&c.FlakyRate, 0.3)
	setDefault(&c.Seed, 1)
	setDefault(&c.SoftBanSite, "wildberries")
	setDefault(&c.SoftBans, DefaultSoftBans)
	if c.Mix == (Mix{}) {
		c.Mix = DefaultMix
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// validate checks the values a user can give on the command line.
func (c Config) validate() error {
	switch {
	case c.Duration < 0:
		return fmt.Errorf("duration %s: want a positive duration", c.Duration)
	case c.Proxies < healthyMin+max(c.Dead, 0)+max(c.Flaky, 0):
		return fmt.Errorf("proxies %d: want at least %d (%d dead and %d flaky ones are added to %d healthy)",
			c.Proxies, healthyMin+max(c.Dead, 0)+max(c.Flaky, 0), max(c.Dead, 0), max(c.Flaky, 0), healthyMin)
	case c.GatewayExits > 0 && c.GatewaySessions < 1:
		return fmt.Errorf("gateway sessions %d: want at least 1", c.GatewaySessions)
	case c.FlakyRate < 0 || c.FlakyRate > 1:
		return fmt.Errorf("flaky rate %g: want 0..1", c.FlakyRate)
	case c.Mix.Searches < 0 || c.Mix.Products < 0 || c.Mix.Pages < 0 || c.Mix.Empty < 0:
		return fmt.Errorf("job mix %+v: counts must not be negative", c.Mix)
	case c.Mix.Searches == 0 && c.Mix.Products == 0 && c.Mix.Empty == 0:
		return fmt.Errorf("job mix %+v: no jobs", c.Mix)
	}
	return nil
}

// healthyMin is the least number of healthy proxies a demo runs with.
const healthyMin = 3
