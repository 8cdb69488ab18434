package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"crawlq/lab/chaos"
)

// newBenchChaosCmd is `crawlq bench chaos`.
func newBenchChaosCmd(a *app) *cobra.Command {
	var o chaos.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Run three workers against the strict testbed while killing a worker, Redis and proxies; count lost jobs, violations, stuck leases, duplicates",
		Long: `Starts its own queue Redis (AOF on) and broker Redis from redis-server on
PATH, the testbed in strict anti-bot mode and --workers crawlq worker
processes (this binary), enqueues --jobs jobs, then at 30 % of them
finished kills a worker with SIGKILL (restarted later; with --modems the
one rotating a modem, whose rotation must free itself within the lease
TTL), at 40 % kills a
quarter of the proxies, at 45 % takes the broker's Redis away for 10 s
(--broker-outage) and at 60 % restarts the queue Redis. It prints one JSON line
{"jobs","completed","archived","lost","i1_violations","i2_violations",
"stuck_leases","duplicate_items","false_quarantines","missed_soft_bans"}
and a second with timings, and exits non-zero when a goal is missed.
Among the jobs are --no-result-jobs searches that match nothing, and
Wildberries soft-bans --soft-bans IPs (they answer with its empty shape;
with --soft-ban-pairs each ban also bans the next other IP asking for what
it hid, so a confirmation's witness is soft-banned too): false_quarantines and missed_soft_bans score the workers against the
testbed's truth. --redis is not used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchChaos(cmd, a, o, asJSON) },
	}
	addChaosFlags(cmd.Flags(), &o, &asJSON)
	return cmd
}

// runBenchChaos runs the chaos bench with this binary as the workers and
// fails when a goal is missed.
func runBenchChaos(cmd *cobra.Command, a *app, o chaos.Options, asJSON bool) error {
	log, err := a.logger()
	if err != nil {
		return err
	}
	defer log.Sync()
	if o.Binary, err = os.Executable(); err != nil {
		return fmt.Errorf("locate the crawlq binary: %w", err)
	}
	o.Logger = log
	rep, err := chaos.Run(cmd.Context(), o)
	if err != nil {
		return postgresErr(err)
	}
	if err := printChaos(cmd, rep, asJSON); err != nil {
		return err
	}
	if f := rep.Failures(); len(f) > 0 {
		return fmt.Errorf("chaos goals missed: %s", strings.Join(f, "; "))
	}
	return nil
}

// addChaosFlags binds `bench chaos`'s flags to o and asJSON.
func addChaosFlags(fl *pflag.FlagSet, o *chaos.Options, asJSON *bool) {
	fl.IntVar(&o.Jobs, "jobs", 600, fmt.Sprintf("jobs to enqueue (at least %d)", chaos.MinJobs))
	fl.IntVar(&o.Workers, "workers", 3, "crawlq worker processes")
	fl.IntVar(&o.Concurrency, "concurrency", 6, "each worker's --concurrency")
	fl.IntVar(&o.Proxies, "proxies", 20, "testbed farm proxies")
	fl.StringVar(&o.BrokerOutageMode, "broker-outage", chaos.OutageRestart, "how the broker's Redis goes away: restart (SIGTERM, start again from its AOF) or freeze (SIGSTOP, SIGCONT)")
	fl.DurationVar(&o.LeaseTTL, "lease-ttl", 0, "workers' --lease-ttl (default 5s)")
	fl.DurationVar(&o.Timeout, "timeout", 0, "bound of the whole run (default 4m30s)")
	fl.Int64Var(&o.Seed, "seed", 1, "seed of the catalog and the job mix")
	fl.IntVar(&o.NoResultJobs, "no-result-jobs", 12, "searches among the jobs that match nothing")
	fl.IntVar(&o.SoftBans, "soft-bans", 12, "IPs Wildberries soft-bans during the run")
	fl.BoolVar(&o.SoftBanPairs, "soft-ban-pairs", false, "each soft ban also bans the next other IP asking for what it hid (a confirmation's witness): two IPs soft-banned at once")
	fl.BoolVar(&o.KeepDir, "keep", false, "keep the run directory with the worker and Redis logs")
	fl.StringVar(&o.Postgres, "postgres", "", "also run a `crawlq sink` into a database created on this PostgreSQL server (postgres:// URL), kill it -9 and kill its connections mid-run, and count the observations there")
	fl.StringVar(&o.Topology, "topology", "", "run on a Sentinel group (sentinel) or a Redis Cluster (cluster) started for the run, killing its master -9 twice (default: a queue and a broker Redis, one server each)")
	fl.BoolVar(&o.LearnVolume, "learn-volume", false, "with --modems: every site has rotate_after auto (the modems' budget per IP learned from the bans) instead of 3")
	fl.BoolVar(&o.LearnPace, "learn-pace", false, "every site has min_interval auto, learned between the testbed's rule and twice the pace it is told")
	fl.IntVar(&o.Modems, "modems", 0, "testbed modems in the pool with their change links (rotate_after 3 on every site); the killed worker is then the one rotating a modem (default none: see docs/benchmarks.md, Chaos)")
	fl.BoolVar(asJSON, "json", false, "print the result and the details as two JSON lines")
}

func printChaos(cmd *cobra.Command, rep *chaos.Report, asJSON bool) error {
	if asJSON {
		if err := writeJSONLine(cmd, rep.Result); err != nil {
			return err
		}
		return writeJSONLine(cmd, rep.Details)
	}
	r, d, w := rep.Result, rep.Details, cmd.OutOrStdout()
	fmt.Fprintf(w, "jobs %d: completed %d, archived %d, lost %d (unfinished %d)\n", r.Jobs, r.Completed, r.Archived, r.Lost, d.Unfinished)
	fmt.Fprintf(w, "I1 violations %d, I2 violations %d (%d requests, %d bans)\n", r.I1Violations, r.I2Violations, d.Requests, d.Bans)
	fmt.Fprintf(w, "stuck leases %d, duplicate items %d (%d items, %d missing)\n", r.StuckLeases, r.DuplicateItems, d.Items, d.MissingItems)
	if r.ObservationsMissing != nil && r.ObservationsDuplicated != nil {
		fmt.Fprintf(w, "sink: observations missing %d, duplicated %d (counted in PostgreSQL)\n", *r.ObservationsMissing, *r.ObservationsDuplicated)
	}
	fmt.Fprintf(w, "false quarantines %d, missed soft bans %d (%d no-result jobs, %d completed empty; %d soft-banned answers)\n",
		r.FalseQuarantines, r.MissedSoftBans, d.NoResultJobs, d.EmptyJobs, d.SoftBannedAnswers)
	if m := d.Modems; m != nil {
		fmt.Fprintf(w, "modems %d: %d rotations, %d refused, %d too soon, %d requests while settling, %d requests\n",
			m.Modems, m.Rotations, m.Refusals, m.TooSoon, m.WhileSettling, m.Requests)
		if k := m.Killed; k != nil {
			fmt.Fprintf(w, "killed rotation: %s held by %s, freed (%s) %.1fs after the kill (lease TTL %gs), %d requests through it after\n",
				k.Modem, k.Holder, k.FreedBy, k.FreedAfterS, k.LeaseTTLS, k.RequestsAfterKill)
		}
	}
	for _, f := range d.Faults {
		fmt.Fprintf(w, "fault %-14s at %5.1fs (%3.0f%%) for %5.1fs  %s %s\n", f.Name, f.AtS, f.Progress*100, f.TookS, f.Note, f.Error)
	}
	fmt.Fprintf(w, "setup %.1fs, crawl %.1fs, total %.1fs\n", d.SetupS, d.CrawlS, d.DurationS)
	if d.Dir != "" {
		fmt.Fprintf(w, "logs in %s\n", d.Dir)
	}
	return nil
}
