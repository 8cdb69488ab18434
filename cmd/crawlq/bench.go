package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// newBenchCmd is `crawlq bench` and its subcommands.
func newBenchCmd(a *app) *cobra.Command {
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
	cmd.AddCommand(
		newBenchBrokerCmd(a),
		newBenchChaosCmd(a),
		newBenchCrawlCmd(a),
		newBenchIdleCmd(),
		newBenchMixCmd(a),
		newBenchScheduleCmd(a),
		newBenchWebCmd(a),
		newBenchSinkCmd(a),
	)
	return cmd
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
