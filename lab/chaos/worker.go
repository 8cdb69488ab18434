package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/backoff"
)

// workerSpec is what every `crawlq worker` child is started with.
type workerSpec struct {
	binary, queueURL, brokerURL, config, dir string
	concurrency                              int
	leaseTTL                                 time.Duration
}

// worker is one `crawlq worker --server-id ID` child (or, with argv, the
// `crawlq sink` child); it can be killed and
// started again under the same ID.
type worker struct {
	id   string
	spec workerSpec
	mu   sync.Mutex
	proc *process
	// starts counts the starts, so a worker's exits can be told apart.
	starts int
	// killed is set from kill9 until the next start.
	killed bool
	// argv, if set, replaces the worker command (the sink process).
	argv []string
}

func (w *worker) args() []string {
	if w.argv != nil {
		return w.argv
	}
	s := w.spec
	return []string{"worker", "--redis", s.queueURL, "--broker-redis", s.brokerURL, "--config", s.config,
		"--server-id", w.id, "--concurrency", strconv.Itoa(s.concurrency),
		"--lease-ttl", s.leaseTTL.String(), "--shutdown-timeout", "4s", "--log-level", "info",
		"--poll-interval", "100ms"} // the pace the chaos figures were measured at
}

// start runs the worker, its output appended to DIR/ID.log.
func (w *worker) start() error {
	cmd := exec.Command(w.spec.binary, w.args()...)
	cmd.Env = append(os.Environ(), "CRAWLQ_REDIS="+w.spec.queueURL)
	p, err := startProcess(cmd, filepath.Join(w.spec.dir, w.id+".log"))
	if err != nil {
		return fmt.Errorf("start worker %s: %w", w.id, err)
	}
	w.mu.Lock()
	w.proc, w.starts, w.killed = p, w.starts+1, false
	w.mu.Unlock()
	return nil
}

func (w *worker) current() *process {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.proc
}

// kill9 ends the worker with SIGKILL: no shutdown, leases and active jobs
// left behind as after a crash.
func (w *worker) kill9() {
	w.mu.Lock()
	p := w.proc
	w.killed = true
	w.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// stop ends the worker with SIGTERM (graceful) and reports an unclean exit.
func (w *worker) stop() error {
	p := w.current()
	if p == nil {
		return nil
	}
	if err := p.terminate(15 * time.Second); err != nil {
		return fmt.Errorf("worker %s: %w", w.id, err)
	}
	if err := p.exitErr(); err != nil {
		return fmt.Errorf("worker %s exited: %w", w.id, err)
	}
	return nil
}

// died reports a worker that ended on its own (not killed by the
// harness): its exit error and log path, else "".
func (w *worker) died() string {
	w.mu.Lock()
	p, killed := w.proc, w.killed
	w.mu.Unlock()
	if p == nil || killed || !p.exited() {
		return ""
	}
	return fmt.Sprintf("worker %s (start %d) exited: %v (log %s)", w.id, w.starts, p.exitErr(),
		filepath.Join(w.spec.dir, w.id+".log"))
}

// restart starts w again and waits until its Asynq server is up (its
// process listed among the queue's servers), so the fault that restarts
// it ends only once the worker is past its start-up checks: the next
// fault (the broker's outage) never meets a worker still starting, which
// refuses to start without its broker's Redis, as a new worker should.
func (c *cluster) restart(ctx context.Context, w *worker) error {
	if err := w.start(); err != nil {
		return err
	}
	p := w.current()
	deadline := time.Now().Add(workerUpWithin)
	for {
		if p.exited() {
			return fmt.Errorf("worker %s exited while starting: %v", w.id, p.exitErr())
		}
		servers, err := c.insp.Servers()
		if err == nil && slices.ContainsFunc(servers, func(s *asynq.ServerInfo) bool { return s.PID == p.cmd.Process.Pid }) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("worker %s not up within %s (servers: %v)", w.id, workerUpWithin, err)
		}
		if err := backoff.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// workerUpWithin bounds a restarted worker's start-up.
const workerUpWithin = 30 * time.Second
