package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// benchMixFlags are the flags of `crawlq bench mix`.
type benchMixFlags struct {
	o      bench.MixOptions
	asJSON bool
}

const benchMixLong = `Runs --workers in-process worker servers of --concurrency slots each, serving
two queues at weight 1 against the testbed (both sites strict at
--min-interval): one-page Wildberries jobs through --wb-proxies proxies (more
queued than the window can take) and a backlog of --avito-jobs one-page Avito
jobs through --avito-proxies proxies, or --avito-modems modems that rotate
before the site's volume ban (rotate_after).

Figures: each site's jobs/s over the window against its limit (its proxies /
min interval); failed_attempts (each uses up a retry) and archived jobs over
both queues; handed_back, the attempts that gave their slot back to wait for
a proxy; bans and I1/I2 violations from the sites' own log. The Redis DB must
be empty; the bench deletes its asynq:* and crawlq:* keys at the end.`

// newBenchMixCmd is `crawlq bench mix`.
func newBenchMixCmd(a *app) *cobra.Command {
	var f benchMixFlags
	cmd := &cobra.Command{
		Use:   "mix",
		Short: "Two sites on one worker: Wildberries' jobs/s while an Avito backlog waits for its few proxies",
		Long:  benchMixLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runBenchMix(cmd, a, f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.o.WBProxies, "wb-proxies", 8, "Wildberries' proxies (datacenter)")
	fl.IntVar(&f.o.AvitoProxies, "avito-proxies", 1, "Avito's proxies (residential)")
	fl.IntVar(&f.o.AvitoModems, "avito-modems", 0, "give Avito this many rotating modems instead of its proxies")
	fl.IntVar(&f.o.AvitoJobs, "avito-jobs", 72, "the Avito backlog")
	fl.IntVar(&f.o.Workers, "workers", 1, "worker servers")
	fl.IntVar(&f.o.Concurrency, "concurrency", 8, "job slots of each worker")
	fl.DurationVar(&f.o.MinInterval, "min-interval", 1500*time.Millisecond, "both sites' min_interval")
	fl.DurationVar(&f.o.Duration, "duration", time.Minute, "the measured window")
	fl.DurationVar(&f.o.PollInterval, "poll-interval", 0, "the workers' poll interval (default: a worker's own)")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	return cmd
}

func runBenchMix(cmd *cobra.Command, a *app, f benchMixFlags) error {
	ctx := cmd.Context()
	var err error
	if f.o.Logger, err = a.logger(); err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	target := bench.CrawlTarget{Client: conn.Client, Asynq: conn.Asynq, URL: childRedisURL(a, conn), NewClient: conn.Target.NewClient}
	res, err := bench.RunMix(ctx, target, f.o)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSONLine(cmd, res)
	}
	printMix(cmd, res)
	return nil
}

func printMix(cmd *cobra.Command, res *bench.MixResult) {
	w := cmd.OutOrStdout()
	avito := fmt.Sprintf("%d proxies", res.AvitoProxies)
	if res.AvitoModems > 0 {
		avito = fmt.Sprintf("%d rotating modems", res.AvitoModems)
	}
	fmt.Fprintf(w, "workers %d x %d slots, min interval %gs, window %gs; wildberries %d proxies, avito %s, %d avito jobs queued\n",
		res.Workers, res.Concurrency, res.MinIntervalS, res.DurationS, res.WBProxies, avito, res.AvitoJobs)
	for _, s := range []struct {
		name string
		f    bench.MixSite
	}{{"wildberries", res.WB}, {"avito", res.Avito}} {
		fmt.Fprintf(w, "%-12s %4d jobs  %5.2f jobs/s  limit %5.2f/s  %.2fx\n", s.name, s.f.Jobs, s.f.PerSecond, s.f.Limit, s.f.OfLimit)
	}
	fmt.Fprintf(w, "failed attempts %d, archived %d, handed back %d, avito jobs waiting in slots at once %d, bans %d, I1 %d, I2 %d\n",
		res.FailedAttempts, res.Archived, res.HandedBack, res.AvitoPeakWaiting, res.Bans, res.I1, res.I2)
}
