package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"crawlq/lab/bench"
)

// addCrawlLearnFlags binds the flags of `bench crawl --learn` without
// --modems (the learned pace) to f; --learn itself is
// addCrawlProxyFlags'.
func addCrawlLearnFlags(fl *pflag.FlagSet, f *benchCrawlFlags) {
	fl.IntVar(&f.learn.Proxies, "learn-proxies", 10, "learn mode: proxies per arm")
	fl.DurationVar(&f.learn.Gap, "hidden-gap", 0, "learn mode: the site's hidden gap per IP (default 500ms)")
	fl.DurationVar(&f.learn.TightenTo, "tighten-to", 0, "learn mode: the hidden gap from --tighten-at on (default 1s)")
	fl.DurationVar(&f.learn.TightenAt, "tighten-at", 0, "learn mode: when the hidden gap tightens (default 4m; negative: never)")
	fl.DurationVar(&f.learn.TooFast, "too-fast", 0, "learn mode: the too-fast arm's min_interval (default 200ms)")
	fl.DurationVar(&f.learn.Fixed, "fixed", 0, "learn mode: the safe arm's min_interval (default 2s)")
}

// runBenchLearn is `bench crawl --learn`.
func runBenchLearn(cmd *cobra.Command, a *app, f benchCrawlFlags) error {
	if f.topology != "" || f.broker != "" || f.o.Gateway > 0 || f.o.Challenge {
		return fmt.Errorf("--learn: runs on --redis alone, without --topology, --broker-redis, --gateway or --challenge")
	}
	o := f.learn
	o.Site, o.Seed, o.CatalogSize = f.o.Site, 1, f.o.CatalogSize
	if fl := cmd.Flags(); fl.Changed("duration") {
		o.Duration = f.o.Duration
	}
	if fl := cmd.Flags(); fl.Changed("workers") {
		o.Workers = f.o.Workers
	}
	o.Concurrency = f.o.Concurrency
	var err error
	ctx := cmd.Context()
	if o.Logger, err = a.logger(); err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	target := bench.CrawlTarget{Client: conn.Client, Asynq: conn.Asynq, NewClient: conn.Target.NewClient}
	res, err := bench.RunLearnCrawl(ctx, target, o)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSONLine(cmd, res)
	}
	printLearnResult(cmd, res)
	return nil
}

func printLearnResult(cmd *cobra.Command, res *bench.LearnResult) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "hidden gap %gms (limit %.1f pages/s an arm)", res.GapMS, res.LimitRPS)
	if res.TightenAtS > 0 {
		fmt.Fprintf(w, ", %gms from %gs (limit %.1f)", res.TightenToMS, res.TightenAtS, res.TightLimitRPS)
	}
	fmt.Fprintf(w, "; %d proxies, %d workers x %d slots an arm; %gs\n", res.ProxiesPerArm, res.Workers, res.Concurrency, res.DurationS)
	for _, arm := range []struct {
		name string
		a    bench.LearnArm
	}{{"auto", res.Auto}, {"too fast", res.TooFast}, {"fixed", res.Fixed}} {
		fmt.Fprintf(w, "%-8s min_interval %-6s %6.2f pages/s  %d requests  429s %d  bans %d (%d IPs)  refused %d\n",
			arm.name, arm.a.MinInterval, arm.a.RPS, arm.a.Requests, arm.a.Limited, arm.a.Bans, arm.a.BannedIPs, arm.a.Refused)
	}
	fmt.Fprintf(w, "auto: 0.9x the limit at %gs, held %.3fx on average (each 10 s >= %.3fx); 429s %.2f%% of requests",
		res.ReachS, res.HeldMeanOfLimit, res.HeldOfLimit, 100*res.LimitedShare)
	if res.TightenAtS > 0 {
		fmt.Fprintf(w, "; after the tightening last 429 at +%gs, %.3fx the new limit at +2 min", res.StopS, res.AfterOfLimit)
	}
	fmt.Fprintf(w, "; accepted %v\n", res.Accepted)
	fmt.Fprintf(w, "per 10 s (auto pages/s | 429s): %s\n", perTenLine(res.Auto))
	fmt.Fprintf(w, "learned pace (ms, each change): %s\n", paceLine(res.Auto.Pace))
}

// perTenLine is "pages/s|429s" of each 10 s.
func perTenLine(a bench.LearnArm) string {
	parts := make([]string, len(a.PerTen))
	for i, v := range a.PerTen {
		parts[i] = fmt.Sprintf("%.1f|%d", v, a.LimitedPerTen[i])
	}
	return strings.Join(parts, " ")
}

// paceLine is "s:ms" at each change of the learned pace.
func paceLine(ps []bench.PacePoint) string {
	var parts []string
	last := int64(-1)
	for _, p := range ps {
		if p.MS != last {
			parts = append(parts, fmt.Sprintf("%gs:%d", p.S, p.MS))
			last = p.MS
		}
	}
	return strings.Join(parts, " ")
}
