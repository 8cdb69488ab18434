package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// newBenchWebCmd is `crawlq bench web`.
func newBenchWebCmd(a *app) *cobra.Command {
	var o bench.WebOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Dashboard at a big pool: page size and first render in Chromium, update size, /api/pool, /metrics series and render time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			rdb, ok := conn.Client.(*redis.Client)
			if !ok {
				return fmt.Errorf("bench web runs on one Redis server (--redis redis://…), not on %s", conn.URL)
			}
			res, err := bench.RunWeb(cmd.Context(), rdb, conn.Asynq, o)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONLine(cmd, res)
			}
			printWeb(cmd, res)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Proxies, "proxies", 100000, "proxies in the benchmark pool")
	cmd.Flags().IntVar(&o.Cycles, "cycles", 30000, "lease+release cycles per site before measuring")
	cmd.Flags().StringVar(&o.Chromium, "chromium", "", `Chromium binary for the first-render figure (default chromium on PATH; "off" to skip)`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// printWeb prints `bench web`'s figures as text.
func printWeb(cmd *cobra.Command, res *bench.WebResult) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "proxies %d on %d sites (%d rows), seeded in %.1fs; one full read of the pool %.0f ms\n",
		res.Proxies, res.Sites, res.Rows, res.SeedMS/1000, res.FullReadMS)
	fmt.Fprintf(w, "redis stall    %8.0f ms  longest PING of another client during one full read (%.0f ms as long again without one)\n", res.StallMS, res.IdleStallMS)
	fmt.Fprintf(w, "pool page      %8.1f KB  served in %.0f ms\n", kb(res.PageBytes), res.PageMS)
	if res.ChromiumError != "" {
		fmt.Fprintf(w, "first render   (none: %s)\n", res.ChromiumError)
	} else {
		fmt.Fprintf(w, "first render   %8.0f ms  (headless Chromium, load event)\n", res.FirstRenderMS)
	}
	fmt.Fprintf(w, "update         %8.1f KB  /api/summary every refresh; rows %.1f KB when a new full read exists\n", kb(res.SummaryBytes), kb(res.RowsBytes))
	fmt.Fprintf(w, "/api/pool      %8.1f KB  default page; ?all=1 %.1f MB streamed in %.0f ms\n", kb(res.APIPoolBytes), kb(res.APIAllBytes)/1024, res.APIAllMS)
	fmt.Fprintf(w, "/metrics       %8d series, %.1f KB, rendered in %.1f ms\n", res.MetricsSeries, kb(res.MetricsBytes), res.MetricsMS)
}

func kb(n int) float64 { return float64(n) / 1024 }
