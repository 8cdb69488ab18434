package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// newBenchScheduleCmd is `crawlq bench schedule`.
func newBenchScheduleCmd(a *app) *cobra.Command {
	var o bench.ScheduleOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Schedulers side by side on one @every schedule: each tick's jobs queued exactly once?",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			res, err := bench.RunSchedule(cmd.Context(), conn.Target, o)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONLine(cmd, res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d schedulers, @every %s for %s, %d jobs a tick\nticks %d (%d expected), enqueued %d, refused %d, duplicates %d, skipped %d, missed %d, worst enqueue lag %dms\n",
				res.Schedulers, res.Every, res.Duration, res.Jobs, res.Ticks, res.Expected, res.Enqueued, res.Refused, res.Duplicates, res.Skipped, res.Missed, res.EnqueueLagMs)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&o.Duration, "duration", 60*time.Second, "how long the schedulers run")
	fl.DurationVar(&o.Every, "every", 2*time.Second, "the schedule's period (@every), whole seconds")
	fl.IntVar(&o.Schedulers, "schedulers", 2, "schedulers side by side, each on its own connections")
	fl.IntVar(&o.Jobs, "jobs", 1, "jobs the schedule queues per tick")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
