package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// benchIdleFlags are the flags of `crawlq bench idle`.
type benchIdleFlags struct {
	o      bench.IdleOptions
	bin    string
	asJSON bool
}

// newBenchIdleCmd is `crawlq bench idle`.
func newBenchIdleCmd() *cobra.Command {
	var f benchIdleFlags
	cmd := &cobra.Command{
		Use:   "idle",
		Short: "Redis commands/s of idle `crawlq worker` processes (1 and 10), on a private redis-server",
		Long: `bench idle starts a private redis-server (redis-server must be on PATH; --redis
is not used, since the count resets that server's statistics), runs idle
` + "`crawlq worker`" + ` processes on it with the default queues and no jobs, and
counts Redis's commands with CONFIG RESETSTAT and INFO commandstats (the
commands a Lua script runs count, as Redis counts them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchIdle(cmd, f) },
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&f.o.Workers, "workers", []int{1, 10}, "idle worker counts, one run each")
	fl.DurationVar(&f.o.Duration, "duration", 30*time.Second, "how long each run counts")
	fl.DurationVar(&f.o.Warmup, "warmup", 5*time.Second, "how long the workers run, all up, before the count")
	fl.DurationVar(&f.o.PollInterval, "poll-interval", 0, "the workers' --poll-interval (default: theirs)")
	fl.StringVar(&f.bin, "worker-bin", "", "run this crawlq binary as the worker, e.g. an older build to compare (default: this one)")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	return cmd
}

func runBenchIdle(cmd *cobra.Command, f benchIdleFlags) error {
	start, err := selfCommand()
	if err != nil {
		return err
	}
	if f.bin != "" {
		start = func(ctx context.Context, args []string) *exec.Cmd { return exec.CommandContext(ctx, f.bin, args...) }
	}
	f.o.Command = start
	res, err := bench.RunIdle(cmd.Context(), f.o)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSONLine(cmd, res)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "idle workers, poll interval %s, %gs counted\n", res.PollInterval, res.DurationS)
	for _, r := range res.Runs {
		top := make([]string, len(r.Top))
		for i, c := range r.Top {
			top[i] = fmt.Sprintf("%s %.1f", c.Command, c.PerS)
		}
		fmt.Fprintf(w, "%3d workers: %8.1f commands/s (%.1f a worker); most called /s: %s\n",
			r.Workers, r.PerS, r.PerWorkerS, strings.Join(top, ", "))
	}
	return nil
}
