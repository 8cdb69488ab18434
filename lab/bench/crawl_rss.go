package bench

import (
	"bufio"
	"bytes"
	"context"
	"crawlq/fetcher/browser"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

// measureRSS is the crawlq phase's after hook: a `crawlq worker` child at
// RSSConcurrency crawls the phase's testbed through the same pool for
// RSSDuration; its peak RSS goes to *mb. Nil without a WorkerCommand.
func (r *crawlRun) measureRSS(mb *float64) after {
	if r.o.WorkerCommand == nil {
		return nil
	}
	return func(ctx context.Context, env *phaseEnv) error {
		v, err := r.workerRSS(ctx, env)
		*mb = v
		return err
	}
}

// workerRSS runs the child and returns its VmHWM in MB (2^20 bytes).
func (r *crawlRun) workerRSS(ctx context.Context, env *phaseEnv) (float64, error) {
	dir, err := os.MkdirTemp("", "crawlq-bench-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	cfg, err := r.writeWorkerConfig(dir, env)
	if err != nil {
		return 0, err
	}
	if err := env.feed.enqueue(ctx, r.rssLowWater()*2); err != nil {
		return 0, err
	}
	defer r.dropQueue(env.queue)
	kb, stderr, err := r.runChild(ctx, env, cfg)
	if err != nil {
		return 0, fmt.Errorf("worker child: %w (stderr: %s)", err, stderr)
	}
	return float64(kb) / 1024, nil
}

// rssLowWater keeps every slot of the child busy with a job to spare.
func (r *crawlRun) rssLowWater() int {
	return r.o.RSSConcurrency*2 + int(r.expectedRate()*r.o.RSSDuration.Seconds())
}

// writeWorkerConfig writes the child's --config: the site at the testbed
// with min_interval D, the same queue, the testbed's CA trusted; its broker uses the default pool,
// which the crawlq phase filled.
func (r *crawlRun) writeWorkerConfig(dir string, env *phaseEnv) (string, error) {
	sc := map[string]string{"base_url": r.siteURL(env.tb), "min_interval": r.o.MinInterval.String(),
		"class": "datacenter", "queue": env.queue}
	raw, err := yaml.Marshal(map[string]any{"sites": map[string]any{r.o.Site: sc},
		"tls": map[string]string{"ca_file": env.tb.CAFile}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "worker.yaml")
	return path, os.WriteFile(path, raw, 0o600)
}

// runChild starts the child, keeps its queue full for RSSDuration, reads
// its peak RSS, and stops it with an interrupt.
func (r *crawlRun) runChild(ctx context.Context, env *phaseEnv, cfg string) (int64, string, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"worker", "--config", cfg, "--queues", env.queue + "=1",
		"--concurrency", strconv.Itoa(r.o.RSSConcurrency), "--server-id", "bench-rss",
		"--shutdown-timeout", "2s", "--log-level", "error"}
	if r.t.split() {
		args = append(args, "--broker-redis", r.t.BrokerURL)
	}
	if r.o.Challenge {
		args = append(args, "--browsers", "1", "--chrome", r.o.Chrome)
	}
	cmd := r.o.WorkerCommand(cctx, args)
	cmd.Env = append(cmd.Environ(), "CRAWLQ_REDIS="+r.t.URL)
	stderr := &capped{max: 4096}
	cmd.Stdout, cmd.Stderr = nil, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var feeding sync.WaitGroup
	feeding.Go(func() { _ = env.feed.keepAbove(cctx, r.rssLowWater()) })
	kb, err := watchRSS(ctx, cmd.Process.Pid, r.o.RSSDuration, exited, firstRequest(env.tb.Log.Len))
	if r.o.Challenge && err == nil { // the worker's browser is part of the worker
		b := browser.DescendantsRSS(cmd.Process.Pid) >> 10
		r.browserRSS = float64(b) / 1024
		kb += b
	}
	cancel()
	feeding.Wait()
	if werr := <-exited; err == nil && !stoppedAsAsked(werr) {
		err = werr
	}
	return kb, stderr.String(), err
}

// childStartLimit bounds how long the child may take to send its first
// request.
const childStartLimit = 30 * time.Second

// firstRequest returns a channel closed when the site's log grows past its
// length now: the child is crawling.
func firstRequest(length func() int) func(stop <-chan struct{}) <-chan struct{} {
	before := length()
	return func(stop <-chan struct{}) <-chan struct{} {
		started := make(chan struct{})
		go func() {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for length() == before {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
			close(started)
		}()
		return started
	}
}

// watchRSS waits for the child's first request, lets it crawl for d
// (failing if it exits first) and returns its VmHWM in kB.
func watchRSS(ctx context.Context, pid int, d time.Duration, exited chan error, started func(<-chan struct{}) <-chan struct{}) (int64, error) {
	stop := make(chan struct{})
	defer close(stop)
	limit := time.NewTimer(childStartLimit)
	defer limit.Stop()
	select {
	case <-started(stop):
	case <-limit.C:
		return 0, fmt.Errorf("sent no request within %s", childStartLimit)
	case err := <-exited:
		exited <- err
		return 0, fmt.Errorf("exited before its first request: %v", err)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case err := <-exited:
		exited <- err
		return 0, fmt.Errorf("exited early: %v", err)
	case <-t.C:
	}
	return procStatusKB(pid, "VmHWM")
}

// procStatusKB reads one "Field:   123 kB" line of /proc/PID/status.
func procStatusKB(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read worker rss (linux /proc only): %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// stoppedAsAsked says the child's Wait error only tells that it was
// interrupted (exec reports a clean exit after Cancel as context.Canceled).
func stoppedAsAsked(err error) bool {
	return err == nil || errors.Is(err, context.Canceled) || interrupted(err)
}

// interrupted says err is the exit of a process killed by SIGINT.
func interrupted(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// capped keeps the first max bytes written to it.
type capped struct {
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string { return strings.TrimSpace(c.buf.String()) }
