package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// newBenchBrokerCmd is `crawlq bench broker`.
func newBenchBrokerCmd(a *app) *cobra.Command {
	var o bench.BrokerOptions
	var asJSON bool
	var topology string
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Lease+release cycles/s of crawlq's broker vs the naive article broker vs two PINGs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withTopology(a, topology, func() error { return runBenchBroker(cmd, a, o, asJSON) })
		},
	}
	cmd.Flags().StringVar(&topology, "topology", "", "run on a Sentinel group or Redis Cluster started for the run: sentinel or cluster (default: --redis)")
	cmd.Flags().IntVar(&o.Proxies, "proxies", 10000, "proxies in the benchmark pool")
	cmd.Flags().IntVar(&o.Workers, "workers", 64, "concurrent goroutines per phase")
	cmd.Flags().DurationVar(&o.Duration, "duration", 3*time.Second, "duration of each phase")
	cmd.Flags().IntVar(&o.Pipelines, "pipelines", 0, "crawlq broker's round trips in flight at once, concurrent scripts sharing them (default 4; -1: one round trip per script, as the naive broker and the floor)")
	cmd.Flags().IntVar(&o.Replicas, "replicas", 0, "crawlq broker: WAIT for this many replicas after each round trip (the failover guard of a Sentinel group)")
	cmd.Flags().BoolVar(&o.Epochs, "epochs", false, "crawlq broker: follow the master's replication ID (failover epochs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func ratio(a, b bench.Rate) float64 {
	if b.CyclesPerS == 0 {
		return 0
	}
	return a.CyclesPerS / b.CyclesPerS
}

func runBenchBroker(cmd *cobra.Command, a *app, o bench.BrokerOptions, asJSON bool) error {
	conn, err := a.redis(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	res, err := bench.RunBroker(cmd.Context(), conn.Target, o)
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
}
