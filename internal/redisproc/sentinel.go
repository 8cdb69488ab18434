package redisproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelGroup is one master, one replica and three sentinels watching
// them under MasterName, with a quick failover (down after 1s).
type SentinelGroup struct {
	MasterName string
	// Dir holds each server's directory and log.
	Dir string
	// Data are the master and replica as started (either may be master
	// after a failover).
	Data      []*Server
	Sentinels []*Server
}

// Sentinel timings: a master is down after DownAfter without an answer.
const (
	DownAfter       = time.Second
	failoverTimeout = 3 * time.Second
)

// StartSentinel starts a Sentinel group in a new temp dir: one master, one
// replica, three sentinels. The processes end when this one does (on
// Linux) or on Stop.
func StartSentinel() (*SentinelGroup, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("no redis-server in PATH: install it (apt-get install redis-server)")
	}
	root, err := os.MkdirTemp("", "crawlq-sentinel-")
	if err != nil {
		return nil, err
	}
	g := &SentinelGroup{MasterName: "crawlq", Dir: root}
	data := []string{"--save", "", "--appendonly", "no", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--enable-debug-command", "local"}
	m, err := StartServer(mkdir(root, "master"), data...)
	if err != nil {
		return nil, err
	}
	r, err := StartServer(mkdir(root, "replica"), append(data, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))...)
	if err != nil {
		return nil, err
	}
	g.Data = []*Server{m, r}
	for i := range 3 {
		dir := mkdir(root, fmt.Sprintf("sentinel%d", i))
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\nsentinel down-after-milliseconds %[1]s %[3]d\n"+
			"sentinel failover-timeout %[1]s %[4]d\nsentinel parallel-syncs %[1]s 1\n",
			g.MasterName, m.Port, DownAfter.Milliseconds(), failoverTimeout.Milliseconds())
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		s, err := StartServer(dir, conf, "--sentinel")
		if err != nil {
			return nil, err
		}
		g.Sentinels = append(g.Sentinels, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return g, g.WaitReady(ctx)
}

func mkdir(root, name string) string {
	d := filepath.Join(root, name)
	_ = os.MkdirAll(d, 0o700)
	return d
}

// URL is the redis-sentinel:// URL of db.
func (g *SentinelGroup) URL(db int) string {
	addrs := make([]string, len(g.Sentinels))
	for i, s := range g.Sentinels {
		addrs[i] = s.Addr
	}
	return fmt.Sprintf("redis-sentinel://%s/%s/%d", strings.Join(addrs, ","), g.MasterName, db)
}

// MasterAddr is the master's address as the first sentinel that answers
// names it.
func (g *SentinelGroup) MasterAddr(ctx context.Context) (string, error) {
	var last error
	for _, s := range g.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		a, err := c.GetMasterAddrByName(ctx, g.MasterName).Result()
		c.Close()
		if err == nil {
			return a[0] + ":" + a[1], nil
		}
		last = err
	}
	return "", last
}

// Server returns the data node at addr.
func (g *SentinelGroup) Server(addr string) *Server {
	for _, s := range g.Data {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// Master is the current master's server.
func (g *SentinelGroup) Master(ctx context.Context) (*Server, error) {
	a, err := g.MasterAddr(ctx)
	if err != nil {
		return nil, err
	}
	if s := g.Server(a); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("sentinels name %s, not a node of the group", a)
}

// Replica is the data node that is not the current master.
func (g *SentinelGroup) Replica(ctx context.Context) (*Server, error) {
	m, err := g.Master(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range g.Data {
		if s != m {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no replica")
}

// WaitReady waits until every sentinel names the same master, that master
// answers as master, the other node is its connected, synced replica, and
// each sentinel knows the replica and the other two sentinels.
func (g *SentinelGroup) WaitReady(ctx context.Context) error {
	for {
		err := g.ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sentinel group not ready: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (g *SentinelGroup) ready(ctx context.Context) error {
	var master string
	for _, s := range g.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		m, err := c.Master(ctx, g.MasterName).Result()
		c.Close()
		if err != nil {
			return err
		}
		a := m["ip"] + ":" + m["port"]
		if master != "" && a != master {
			return fmt.Errorf("sentinels disagree: %s, %s", master, a)
		}
		master = a
		if strings.Contains(m["flags"], "down") || m["num-slaves"] != "1" || m["num-other-sentinels"] != "2" {
			return fmt.Errorf("sentinel %s sees %s flags %s, %s replicas, %s other sentinels",
				s.Addr, a, m["flags"], m["num-slaves"], m["num-other-sentinels"])
		}
	}
	ms := g.Server(master)
	if ms == nil {
		return fmt.Errorf("master %s is not ours", master)
	}
	c := ms.Client()
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "role:master") || !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
		return fmt.Errorf("master %s: replication not online", master)
	}
	return nil
}

// Heal starts every killed data node again (it rejoins as a replica of
// the current master) and waits until the group is ready.
func (g *SentinelGroup) Heal(ctx context.Context) error {
	for _, s := range g.Data {
		if Ping(s.Addr) != nil {
			m, err := g.MasterAddr(ctx)
			if err != nil {
				return err
			}
			host, port, _ := strings.Cut(m, ":")
			s.args = replicaOf(s.args, host, port)
			if err := s.Start(); err != nil {
				return err
			}
		}
	}
	return g.WaitReady(ctx)
}

// replicaOf sets --replicaof in args.
func replicaOf(args []string, host, port string) []string {
	out := make([]string, 0, len(args)+3)
	for i := 0; i < len(args); i++ {
		if args[i] == "--replicaof" {
			i += 2
			continue
		}
		out = append(out, args[i])
	}
	return append(out, "--replicaof", host, port)
}

// Stop kills every process of the group and removes its directory.
func (g *SentinelGroup) Stop() {
	for _, s := range append(append([]*Server(nil), g.Data...), g.Sentinels...) {
		s.Kill()
	}
	_ = os.RemoveAll(g.Dir)
}

// CutOffReplica cuts the replica's link to the master and puts the replica
// to sleep for d (DEBUG SLEEP), and returns once the master sees no
// replica: what the master writes next reaches the replica only after it
// wakes and reconnects, or never if the master dies first. (A replica
// asleep longer than DownAfter is promoted only once it answers again.)
// The returned channel closes when the replica wakes.
func (g *SentinelGroup) CutOffReplica(ctx context.Context, d time.Duration) (<-chan struct{}, error) {
	master, err := g.Master(ctx)
	if err != nil {
		return nil, err
	}
	replica, err := g.Replica(ctx)
	if err != nil {
		return nil, err
	}
	rc := replica.Client()
	woke := make(chan struct{})
	go func() {
		defer close(woke)
		defer rc.Close()
		pipe := rc.Pipeline()
		pipe.Do(context.Background(), "client", "kill", "type", "master")
		pipe.Do(context.Background(), "debug", "sleep", fmt.Sprintf("%.3f", d.Seconds()))
		_, _ = pipe.Exec(context.Background())
	}()
	mc := master.Client()
	defer mc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if info, err := mc.Info(ctx, "replication").Result(); err == nil && strings.Contains(info, "connected_slaves:0") {
			return woke, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return woke, fmt.Errorf("the master %s still sees its replica", master.Addr)
}
