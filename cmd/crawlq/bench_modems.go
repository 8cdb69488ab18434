package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// runBenchModems is `bench crawl --modems N`.
func runBenchModems(cmd *cobra.Command, a *app, f benchCrawlFlags) error {
	if f.topology != "" || f.broker != "" || f.o.Gateway > 0 || f.o.Challenge {
		return fmt.Errorf("--modems: runs on --redis alone, without --topology, --broker-redis, --gateway or --challenge")
	}
	var err error
	if f.o.Volume, err = bench.ParseVolume(f.volume); err != nil {
		return fmt.Errorf("--volume: %w", err)
	}
	fl := cmd.Flags()
	if !fl.Changed("min-interval") {
		f.o.MinInterval = time.Second // Avito's default
	}
	if !fl.Changed("duration") {
		f.o.Duration = 45 * time.Second
	}
	ctx := cmd.Context()
	if f.o.Logger, err = a.logger(); err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	target := bench.CrawlTarget{Client: conn.Client, Asynq: conn.Asynq, URL: childRedisURL(a, conn), NewClient: conn.Target.NewClient}
	res, err := bench.RunModemCrawl(ctx, target, f.o)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSONLine(cmd, res)
	}
	printModemResult(cmd, res)
	return nil
}

func printModemResult(cmd *cobra.Command, res *bench.ModemCrawlResult) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "modems %d (carrier pool %d IPs, change every %gs (provider's %gs), settle %gs), workers %d x %d slots, min interval %gms, window %gs\n",
		res.Modems, res.Exits, res.ChangeEveryS, res.ProviderEveryS, res.ChangeSettleS, res.Workers, res.Concurrency, res.MinIntervalMS, res.DurationS)
	fmt.Fprintf(w, "site bans an IP past %d requests in %gs; quarantine %g-%gs (today's, scaled); rotate_after %d; per-IP limit %.1f pages/s\n",
		res.VolumeRequests, res.VolumeWindowS, res.QuarantineBaseS, res.QuarantineCapS, res.RotateAfter, res.LimitRPS)
	for _, p := range []struct {
		name string
		ph   bench.ModemPhase
	}{{"quarantine", res.Quarantine}, {"rotate on ban", res.RotateOnBan}, {"rotate before", res.RotateBefore}} {
		if p.ph.Requests == 0 {
			continue // not run
		}
		fmt.Fprintf(w, "%-13s %6.2f pages/s  %7.0f pages/modem-hour  bans %d (%d IPs)  rotations %d (p50 %.0fms p90 %.0fms, %d failed)  while settling %d, too soon %d, refused %d (%d late), I1 %d, I2 %d\n",
			p.name, p.ph.RPS, p.ph.PagesPerModemHour, p.ph.Bans, p.ph.BannedIPs, p.ph.Rotations, p.ph.RotationP50MS, p.ph.RotationP90MS,
			p.ph.RotationFailed, p.ph.WhileSettling, p.ph.TooSoon, p.ph.Refusals, p.ph.LateRefusals, p.ph.I1Violations, p.ph.I2Violations)
		if p.ph.LearnedChangeEveryS > 0 {
			fmt.Fprintf(w, "%-13s provider's interval learned: %gs\n", "", p.ph.LearnedChangeEveryS)
		}
		if p.ph.LearnedBudget > 0 {
			fmt.Fprintf(w, "%-13s volume budget learned: %d requests per IP (the site's hidden rule: %d), after %d bans; %d bans after it\n", "",
				p.ph.LearnedBudget, p.ph.HiddenBudget, p.ph.BansToLearn, p.ph.BansAfter)
		}
	}
	if res.Quarantine.Requests > 0 && res.RotateOnBan.Requests > 0 {
		fmt.Fprintf(w, "rotate on ban / quarantine: %.2fx (want >= 3)\n", res.OnBanOfQuarantine)
	}
	if res.RotateBefore.Requests > 0 {
		fmt.Fprintf(w, "rotate before: limit less the rotation time %.2f pages/s, target 0.8x = %.2f; got %.2fx of it (want >= 0.8, and 0 bans)\n",
			res.IdealRPS, res.TargetRPS, res.BeforeOfIdeal)
	}
	verdict := "NOT MET"
	if res.Accepted {
		verdict = "met"
	}
	fmt.Fprintf(w, "acceptance: %s\n", verdict)
}
