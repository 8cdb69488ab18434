package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/internal/redisproc"
	"crawlq/results"
)

// Topologies of Options.Topology.
const (
	TopologySentinel = "sentinel"
	TopologyCluster  = "cluster"
)

// Fault names of the topology runs.
const (
	FaultMasterKill      = "master_kill"
	FaultMasterKillAgain = "master_kill_again"
)

// topologySchedule replaces the two servers' outages with master kills: a
// worker dies at 25 %, a quarter of the proxies at 35 %, the master
// holding the results is killed -9 at 45 % and, once that failover has
// settled and the killed server is back as a replica, the new master at
// 65 %.
var topologySchedule = []fault{
	{FaultKillWorker, 0.25, killWorker},
	{FaultProxiesDie, 0.35, killProxies},
	{FaultMasterKill, 0.45, killMaster},
	{FaultMasterKillAgain, 0.65, killMaster},
}

// failoverDeadline bounds each wait of a master kill: the failover, the
// killed server's return, the first pages after it.
const failoverDeadline = 90 * time.Second

// topology is the Sentinel group or Cluster a run uses for both the queue
// and the broker.
type topology struct {
	url      string
	sentinel *redisproc.SentinelGroup
	cluster  *redisproc.RedisCluster

	mu        sync.Mutex
	recovered float64 // of the last master kill, until fire reads it
}

func (c *cluster) startTopology() error {
	t := &topology{}
	switch c.o.Topology {
	case TopologySentinel:
		g, err := redisproc.StartSentinel()
		if err != nil {
			return fmt.Errorf("sentinel group: %w", err)
		}
		t.sentinel, t.url = g, g.URL(0)
	case TopologyCluster:
		rc, err := redisproc.StartCluster()
		if err != nil {
			return fmt.Errorf("redis cluster: %w", err)
		}
		t.cluster, t.url = rc, rc.URL()
	}
	c.topo = t
	return nil
}

func (t *topology) stop() {
	if t.sentinel != nil {
		t.sentinel.Stop()
	}
	if t.cluster != nil {
		t.cluster.Stop()
	}
}

// master is the server the results live on now.
func (t *topology) master(ctx context.Context) (*redisproc.Server, error) {
	if t.sentinel != nil {
		return t.sentinel.Master(ctx)
	}
	return t.cluster.MasterOf(ctx, results.StreamKey)
}

// heal starts the killed server again (it rejoins as a replica) and waits
// until the deployment is whole.
func (t *topology) heal(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, failoverDeadline)
	defer cancel()
	if t.sentinel != nil {
		return t.sentinel.Heal(ctx)
	}
	return t.cluster.Heal(ctx)
}

// waitFailover polls until another live server than old is the master.
func (t *topology) waitFailover(ctx context.Context, old *redisproc.Server) error {
	deadline := time.Now().Add(failoverDeadline)
	for time.Now().Before(deadline) {
		if m, err := t.master(ctx); err == nil && m != nil && m != old {
			return nil
		}
		if err := backoff.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no failover from %s within %s", old.Addr, failoverDeadline)
}

// takeRecovered returns and clears the last master kill's recovery time.
func (c *cluster) takeRecovered() float64 {
	if c.topo == nil {
		return 0
	}
	c.topo.mu.Lock()
	defer c.topo.mu.Unlock()
	v := c.topo.recovered
	c.topo.recovered = 0
	return v
}

// killMaster kills -9 the master holding the results (on a Cluster, the
// master of their slot, which has a replica), waits until a replica took
// over, starts the killed server again as a replica (as a supervisor
// would) and measures the time from the kill until pages are written
// again.
func killMaster(ctx context.Context, c *cluster) (string, error) {
	t := c.topo
	m, err := t.master(ctx)
	if err != nil {
		return "", fmt.Errorf("find the master: %w", err)
	}
	held := c.leased(ctx)
	kill := time.Now()
	m.Kill()
	if err := t.waitFailover(ctx, m); err != nil {
		return fmt.Sprintf("%s killed -9", m.Addr), err
	}
	failedOver := time.Since(kill)
	c.log.Info("failover", zap.String("killed", m.Addr), zap.Duration("after", failedOver))
	healed := make(chan error, 1)
	go func() { healed <- t.heal(ctx) }()
	perr := c.waitPages(ctx)
	recovered := time.Since(kill)
	t.mu.Lock()
	t.recovered = seconds(recovered)
	t.mu.Unlock()
	note := fmt.Sprintf("%s killed -9 with %d leases held; a replica took over after %.1fs, pages again %.1fs after the kill",
		m.Addr, held, failedOver.Seconds(), recovered.Seconds())
	return note, errors.Join(perr, <-healed)
}

// waitPages waits until the results stream's last generated ID moves
// between two reads on the new master: pages flow again. (Not its length:
// a sink trims what it stored.)
func (c *cluster) waitPages(ctx context.Context) error {
	deadline := time.Now().Add(failoverDeadline)
	first := ""
	for time.Now().Before(deadline) {
		info, err := c.queueRDB.XInfoStream(ctx, results.StreamKey).Result()
		switch {
		case err != nil:
		case first == "":
			first = info.LastGeneratedID
		case info.LastGeneratedID != first:
			return nil
		}
		if err := backoff.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no page written within %s of the failover", failoverDeadline)
}
