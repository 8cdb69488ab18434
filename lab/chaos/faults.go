package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/testbed"
)

// Fault names, as FaultTiming reports them.
const (
	FaultKillWorker   = "kill_worker"
	FaultProxiesDie   = "proxies_die"
	FaultBrokerOutage = "broker_outage"
	FaultQueueRestart = "queue_restart"
)

// fault is one disruption, fired once when the finished share of jobs
// reaches at.
type fault struct {
	name string
	at   float64
	run  func(ctx context.Context, c *cluster) (note string, err error)
}

// schedule is the order of the faults: a worker dies at 30 %, a quarter of
// the proxies at 40 %, the broker's Redis goes away at 45 %, the queue
// Redis restarts at 60 % (each also waits for the one before to end).
var schedule = []fault{
	{FaultKillWorker, 0.30, killWorker},
	{FaultProxiesDie, 0.40, killProxies},
	{FaultBrokerOutage, 0.45, brokerOutage},
	{FaultQueueRestart, 0.60, restartQueue},
}

// FaultTiming is when a fault fired and how long it lasted.
type FaultTiming struct {
	Name string `json:"name"`
	// Progress is the finished share of jobs when it fired.
	Progress float64 `json:"progress"`
	// AtS is seconds from the first enqueue to the fault.
	AtS float64 `json:"at_s"`
	// TookS is how long the fault lasted (outage, time dead).
	TookS float64 `json:"took_s"`
	Note  string  `json:"note,omitempty"`
	Error string  `json:"error,omitempty"`
	// Fired is false for a fault whose threshold was never reached.
	Fired bool `json:"fired"`
	// RecoveredS is, for a master kill, seconds from the kill until pages
	// were written again.
	RecoveredS float64 `json:"recovered_s,omitempty"`
}

// faultRunner fires the schedule as progress is reported.
type faultRunner struct {
	c      *cluster
	start  time.Time
	next   int
	busy   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	timing []FaultTiming

	// schedule is the faults of the run: schedule, or topologySchedule.
	schedule []fault
}

func newFaultRunner(c *cluster, start time.Time) *faultRunner {
	sched := schedule
	if c.topo != nil {
		sched = topologySchedule
	}
	if c.sink != nil {
		sched = withSinkFaults(sched)
	}
	fr := &faultRunner{c: c, schedule: sched, start: start, timing: make([]FaultTiming, len(sched))}
	for i, f := range sched {
		fr.timing[i] = FaultTiming{Name: f.name}
	}
	return fr
}

// progress fires the next fault once its threshold share is reached and
// the fault before it has ended: faults never overlap, so each one's
// effect is its own (a worker restarted while the broker's Redis is down
// would refuse to start).
func (fr *faultRunner) progress(ctx context.Context, share float64) {
	if fr.next < len(fr.schedule) && share >= fr.schedule[fr.next].at && !fr.busy.Load() {
		i := fr.next
		fr.next++
		fr.busy.Store(true)
		fr.wg.Add(1)
		go fr.fire(ctx, i, share)
	}
}

func (fr *faultRunner) fire(ctx context.Context, i int, share float64) {
	defer fr.wg.Done()
	defer fr.busy.Store(false)
	f, at := fr.schedule[i], time.Now()
	fr.c.log.Info("fault", zap.String("fault", f.name), zap.Float64("progress", share))
	note, err := f.run(ctx, fr.c)
	t := FaultTiming{Name: f.name, Progress: round2(share), AtS: seconds(at.Sub(fr.start)),
		TookS: seconds(time.Since(at)), Note: note, Fired: true, RecoveredS: fr.c.takeRecovered()}
	if err != nil {
		t.Error = err.Error()
		fr.c.log.Error("fault failed", zap.String("fault", f.name), zap.Error(err))
	}
	fr.mu.Lock()
	fr.timing[i] = t
	fr.mu.Unlock()
}

// done says whether every fault of the schedule has fired.
func (fr *faultRunner) done() bool { return fr.next == len(fr.schedule) }

// wait waits for the running faults (a dead worker's restart) to end and
// returns every fault's timing.
func (fr *faultRunner) wait() []FaultTiming {
	fr.wg.Wait()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return append([]FaultTiming(nil), fr.timing...)
}

// killWorker kills the second worker with SIGKILL and starts it again
// RestartAfter later. Its active jobs come back through Asynq's lease
// recovery, its proxy leases expire after one lease TTL. With modems it
// kills the worker that is rotating one instead (killRotating).
func killWorker(ctx context.Context, c *cluster) (string, error) {
	if c.tb.Modems != nil {
		return killRotating(ctx, c)
	}
	w := c.workers[1]
	w.kill9()
	if err := backoff.Sleep(ctx, c.o.RestartAfter); err != nil {
		return w.id + " killed, not restarted", err
	}
	return fmt.Sprintf("%s killed -9, restarted after %s", w.id, c.o.RestartAfter), c.restart(ctx, w)
}

// killProxies makes every fourth farm proxy dead: refused connections, cut
// tunnels.
func killProxies(_ context.Context, c *cluster) (string, error) {
	n := c.tb.Farm.Len()
	dead := 0
	for i := 0; i < n && dead < n/4; i += 4 {
		if err := c.tb.Farm.SetFault(i, testbed.Fault{Dead: true}); err != nil {
			return "", err
		}
		dead++
	}
	return fmt.Sprintf("%d of %d proxies dead", dead, n), nil
}

// brokerOutage takes the broker's Redis away for BrokerOutage while
// sessions are in flight. OutageRestart stops it with SIGTERM (AOF kept)
// and starts it again: every call fails at once, connection refused.
// OutageFreeze stops it with SIGSTOP and thaws it with SIGCONT: calls hang
// until their timeouts. Either way its data (pool, leases, sessions,
// results stream) is there again afterwards, so nothing is re-imported.
func brokerOutage(ctx context.Context, c *cluster) (string, error) {
	held := c.leased(ctx)
	if c.o.BrokerOutageMode == OutageFreeze {
		return fmt.Sprintf("SIGSTOP for %s with %d leases held", c.o.BrokerOutage, held), freeze(ctx, c)
	}
	if err := c.broker.stop(); err != nil {
		return "", err
	}
	if err := backoff.Sleep(ctx, c.o.BrokerOutage); err != nil {
		return "stopped, not restarted", err
	}
	return fmt.Sprintf("SIGTERM, down %s with %d leases held, restarted from its AOF", c.o.BrokerOutage, held), c.broker.start(ctx)
}

func freeze(ctx context.Context, c *cluster) error {
	if err := c.broker.pause(); err != nil {
		return err
	}
	err := backoff.Sleep(ctx, c.o.BrokerOutage)
	if rerr := c.broker.resume(); rerr != nil {
		return rerr
	}
	return err
}

// restartQueue stops the queue Redis with SIGTERM (it fsyncs its AOF),
// leaves it down for QueueOutage and starts it again on the same port and
// directory: the queues come back from the AOF.
func restartQueue(ctx context.Context, c *cluster) (string, error) {
	if err := c.queue.stop(); err != nil {
		return "", err
	}
	if err := backoff.Sleep(ctx, c.o.QueueOutage); err != nil {
		return "stopped, not restarted", err
	}
	return fmt.Sprintf("SIGTERM, down %s, restarted from its AOF", c.o.QueueOutage), c.queue.start(ctx)
}

// leased counts the broker's live leases (-1 when it does not answer).
func (c *cluster) leased(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.pool.Stats(ctx)
	if err != nil {
		return -1
	}
	n := 0
	for _, s := range st.Sites {
		n += s.Leased
	}
	return n
}

func seconds(d time.Duration) float64 { return round2(d.Seconds()) }

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
