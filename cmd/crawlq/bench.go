package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"crawlq/internal/bench"
)

// benches are the `crawlq bench` subcommand builders; files add theirs with
// registerBench in an init function (bench crawl, bench chaos, ...).
var benches []func(*app) *cobra.Command

func registerBench(f func(*app) *cobra.Command) { benches = append(benches, f) }

func init() {
	registerBench(benchBrokerCmd)
	register(func(a *app) *cobra.Command {
		cmd := &cobra.Command{Use: "bench", Short: "Benchmarks against the configured Redis"}
		for _, f := range benches {
			cmd.AddCommand(f(a))
		}
		return cmd
	})
}

// benchBrokerCmd is `crawlq bench broker`.
func benchBrokerCmd(a *app) *cobra.Command {
	var o bench.BrokerOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Lease+release cycles/s of crawlq's broker vs the naive article broker vs two PINGs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			res, err := bench.RunBroker(cmd.Context(), conn.Client, o)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONLine(cmd, res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "proxies %d, workers %d\ncrawlq %10.0f cycles/s\nnaive  %10.0f cycles/s (crawlq %.1fx)\nfloor  %10.0f cycles/s (crawlq %.2fx)\ndouble leases %d\n",
				res.Proxies, res.Workers, res.Crawlq.CyclesPerS, res.Naive.CyclesPerS, ratio(res.Crawlq, res.Naive),
				res.Floor.CyclesPerS, ratio(res.Crawlq, res.Floor), res.DoubleLeases)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Proxies, "proxies", 10000, "proxies in the benchmark pool")
	cmd.Flags().IntVar(&o.Workers, "workers", 64, "concurrent goroutines per phase")
	cmd.Flags().DurationVar(&o.Duration, "duration", 3*time.Second, "duration of each phase")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func ratio(a, b bench.Rate) float64 {
	if b.CyclesPerS == 0 {
		return 0
	}
	return a.CyclesPerS / b.CyclesPerS
}

func writeJSONLine(cmd *cobra.Command, v any) error {
	return jsonLine(cmd.OutOrStdout(), v)
}
