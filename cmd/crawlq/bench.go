package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"crawlq/internal/lab/bench"
)

// benches are the `crawlq bench` subcommand builders; files add theirs with
// registerBench in an init function (bench crawl, bench chaos, ...).
var benches []func(*app) *cobra.Command

func registerBench(f func(*app) *cobra.Command) { benches = append(benches, f) }

func init() {
	registerBench(benchBrokerCmd)
	register(func(a *app) *cobra.Command {
		var profile string
		var stopProfile func() error
		cmd := &cobra.Command{Use: "bench", Short: "Benchmarks against the configured Redis",
			PersistentPreRunE: func(*cobra.Command, []string) (err error) {
				stopProfile, err = startCPUProfile(profile)
				return err
			},
			PersistentPostRunE: func(*cobra.Command, []string) error { return stopProfile() },
		}
		cmd.PersistentFlags().StringVar(&profile, "cpuprofile", "", "write a Go CPU profile of this process to FILE (go tool pprof FILE)")
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

func writeJSONLine(cmd *cobra.Command, v any) error {
	return jsonLine(cmd.OutOrStdout(), v)
}

// startCPUProfile starts a CPU profile into path ("" for none) and returns
// what stops it and closes the file.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
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
