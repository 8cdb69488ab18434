package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/backoff"
	"crawlq/internal/heartbeat"
	"crawlq/internal/redisproc"
)

// IdleOptions configures RunIdle. Zero fields take the defaults named.
type IdleOptions struct {
	// Workers are the idle worker counts measured, one run each on a
	// fresh redis-server. Default 1 and 10.
	Workers []int
	// Duration is how long each run counts Redis's commands. Default 30s.
	Duration time.Duration
	// Warmup is how long the workers run, all up, before the count starts
	// (their first heartbeats and script loads are not idle cost); 0: none.
	Warmup time.Duration
	// PollInterval is each worker's --poll-interval; 0 passes none (the
	// worker's default, or a binary older than the flag).
	PollInterval time.Duration
	// Command runs one `crawlq worker` with args (the --redis URL, its
	// --server-id, --browsers 0, …). Required.
	Command func(ctx context.Context, args []string) *exec.Cmd
}

// IdleResult is what N idle workers cost one Redis.
type IdleResult struct {
	PollInterval string    `json:"poll_interval"`
	DurationS    float64   `json:"duration_s"`
	Runs         []IdleRun `json:"runs"`
}

// IdleRun is one count of Redis commands while Workers sat idle.
type IdleRun struct {
	Workers int `json:"workers"`
	// Commands is the sum of INFO commandstats calls (the commands a Lua
	// script runs count, as Redis counts them), the bench's own excluded.
	Commands   int64   `json:"commands"`
	PerS       float64 `json:"commands_per_s"`
	PerWorkerS float64 `json:"commands_per_s_per_worker"`
	// Top are the most called commands, calls per second.
	Top []CommandRate `json:"top"`
}

// CommandRate is one command's calls per second.
type CommandRate struct {
	Command string  `json:"command"`
	PerS    float64 `json:"per_s"`
}

// benchOwn are the commands the bench itself sends during a count.
var benchOwn = map[string]bool{"config|resetstat": true, "info": true}

func (o IdleOptions) withDefaults() IdleOptions {
	if len(o.Workers) == 0 {
		o.Workers = []int{1, 10}
	}
	if o.Duration <= 0 {
		o.Duration = 30 * time.Second
	}
	return o
}

// RunIdle starts, for each count in o.Workers, a private redis-server (so
// resetting and reading its statistics disturbs no one) and that many
// `crawlq worker` processes with empty queues, waits until every one has
// its heartbeat and o.Warmup has passed, then counts Redis's commands for
// o.Duration with CONFIG RESETSTAT and INFO commandstats.
func RunIdle(ctx context.Context, o IdleOptions) (*IdleResult, error) {
	if o.Command == nil {
		return nil, errors.New("bench idle: no worker command")
	}
	o = o.withDefaults()
	res := &IdleResult{PollInterval: "default", DurationS: o.Duration.Seconds()}
	if o.PollInterval > 0 {
		res.PollInterval = o.PollInterval.String()
	}
	for _, n := range o.Workers {
		run, err := idleRun(ctx, o, n)
		if err != nil {
			return nil, fmt.Errorf("bench idle, %d workers: %w", n, err)
		}
		res.Runs = append(res.Runs, run)
	}
	return res, nil
}

// idleRun is one count of n idle workers on a fresh redis-server.
func idleRun(ctx context.Context, o IdleOptions, n int) (IdleRun, error) {
	dir, err := os.MkdirTemp("", "crawlq-bench-idle-")
	if err != nil {
		return IdleRun{}, err
	}
	defer os.RemoveAll(dir)
	srv, err := redisproc.StartServer(dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return IdleRun{}, err
	}
	defer srv.Kill()
	rdb := srv.Client()
	defer rdb.Close()
	ws, err := startIdleWorkers(ctx, o, srv.Addr, n)
	defer ws.stop()
	if err != nil {
		return IdleRun{}, err
	}
	if err := ws.waitUp(ctx, rdb); err != nil {
		return IdleRun{}, err
	}
	if err := backoff.Sleep(ctx, o.Warmup); err != nil {
		return IdleRun{}, err
	}
	return countCommands(ctx, rdb, o.Duration, n)
}

// countCommands resets Redis's statistics, waits d and sums the calls.
func countCommands(ctx context.Context, rdb *redis.Client, d time.Duration, workers int) (IdleRun, error) {
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return IdleRun{}, fmt.Errorf("config resetstat: %w", err)
	}
	start := time.Now()
	if err := backoff.Sleep(ctx, d); err != nil {
		return IdleRun{}, err
	}
	raw, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return IdleRun{}, fmt.Errorf("info commandstats: %w", err)
	}
	secs := time.Since(start).Seconds()
	calls, err := ParseCommandStats(raw)
	if err != nil {
		return IdleRun{}, err
	}
	return idleFigures(calls, secs, workers), nil
}

// idleFigures sums calls (without the bench's own) over secs.
func idleFigures(calls map[string]int64, secs float64, workers int) IdleRun {
	run := IdleRun{Workers: workers}
	for cmd, n := range calls {
		if benchOwn[cmd] {
			continue
		}
		run.Commands += n
		run.Top = append(run.Top, CommandRate{Command: cmd, PerS: float64(n) / secs})
	}
	sort.Slice(run.Top, func(i, j int) bool {
		if run.Top[i].PerS != run.Top[j].PerS {
			return run.Top[i].PerS > run.Top[j].PerS
		}
		return run.Top[i].Command < run.Top[j].Command
	})
	run.Top = run.Top[:min(len(run.Top), 6)]
	run.PerS = float64(run.Commands) / secs
	run.PerWorkerS = run.PerS / float64(workers)
	return run
}

// ParseCommandStats reads INFO commandstats into calls per command
// ("cmdstat_evalsha:calls=12,usec=…" gives "evalsha": 12).
func ParseCommandStats(info string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, fields, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(fields, "calls="), ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil || !strings.HasPrefix(fields, "calls=") {
			return nil, fmt.Errorf("info commandstats: line %q: want calls=N first", line)
		}
		out[name] = n
	}
	return out, nil
}

// idleWorkers are the worker processes of one run.
type idleWorkers struct {
	procs  []*idleProc
	exited chan int // index of a worker whose process ended
}

// idleProc is one worker process; done is closed once it has exited.
type idleProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
}

// startIdleWorkers starts n workers on the Redis at addr.
func startIdleWorkers(ctx context.Context, o IdleOptions, addr string, n int) (*idleWorkers, error) {
	ws := &idleWorkers{exited: make(chan int, n)}
	for i := 0; i < n; i++ {
		args := []string{"worker", "--redis", "redis://" + addr + "/0", "--server-id", fmt.Sprintf("idle-%d", i+1),
			"--browsers", "0", "--log-level", "warn"}
		if o.PollInterval > 0 {
			args = append(args, "--poll-interval", o.PollInterval.String())
		}
		p := &idleProc{cmd: o.Command(ctx, args), done: make(chan struct{})}
		p.cmd.Stdout, p.cmd.Stderr = nil, &p.stderr
		if err := p.cmd.Start(); err != nil {
			return ws, fmt.Errorf("start worker %d: %w", i+1, err)
		}
		ws.procs = append(ws.procs, p)
		go func(i int) { _ = p.cmd.Wait(); close(p.done); ws.exited <- i }(i)
	}
	return ws, nil
}

// waitUp waits until every worker has written its heartbeat with its
// Asynq server's ID; a worker that exits first fails the run.
func (ws *idleWorkers) waitUp(ctx context.Context, rdb *redis.Client) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for up(ctx, rdb) < len(ws.procs) {
		select {
		case i := <-ws.exited:
			return fmt.Errorf("worker %d exited before it was up: %s", i+1, strings.TrimSpace(ws.procs[i].stderr.String()))
		case <-deadline:
			return fmt.Errorf("%d of %d workers up after a minute", up(ctx, rdb), len(ws.procs))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// up counts the heartbeats that name their Asynq server.
func up(ctx context.Context, rdb *redis.Client) int {
	recs, _ := heartbeat.List(ctx, rdb)
	n := 0
	for _, r := range recs {
		if r.AsynqID != "" {
			n++
		}
	}
	return n
}

// stop sends every worker SIGTERM and waits until they have all exited;
// one still running after stopGrace is killed.
func (ws *idleWorkers) stop() {
	for _, p := range ws.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	grace := time.After(stopGrace)
	for _, p := range ws.procs {
		select {
		case <-p.done:
		case <-grace:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// stopGrace is how long an idle worker may take to stop (it has no job).
const stopGrace = 30 * time.Second
