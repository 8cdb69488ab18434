package redisproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCluster is a Redis Cluster of three masters, each with one replica,
// started from redis-server and redis-cli --cluster create.
type RedisCluster struct {
	Nodes []*Server
	// Dir holds each node's directory and log.
	Dir string
}

// ClusterNodeTimeout is how long a master may not answer before the
// cluster fails over to its replica.
const ClusterNodeTimeout = 2 * time.Second

// StartCluster starts a Redis Cluster in a new temp dir: six nodes, three
// masters with a replica each (redis-cli --cluster create). The processes
// end when this one does (on Linux) or on Stop.
func StartCluster() (*RedisCluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("no redis-cli in PATH: install it (apt-get install redis-server)")
	}
	root, err := os.MkdirTemp("", "crawlq-cluster-")
	if err != nil {
		return nil, err
	}
	rc := &RedisCluster{Dir: root}
	for i := range 6 {
		s, err := StartServer(mkdir(root, fmt.Sprintf("node%d", i)), "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", fmt.Sprint(ClusterNodeTimeout.Milliseconds()),
			"--save", "", "--appendonly", "no")
		if err != nil {
			return nil, err
		}
		rc.Nodes = append(rc.Nodes, s)
	}
	args := []string{"--cluster", "create"}
	for _, n := range rc.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	var out bytes.Buffer
	cmd := exec.Command(cli, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return rc, rc.WaitReady(ctx)
}

// URL is the redis-cluster:// URL of the cluster (all its nodes as seeds).
func (rc *RedisCluster) URL() string {
	addrs := make([]string, len(rc.Nodes))
	for i, n := range rc.Nodes {
		addrs[i] = n.Addr
	}
	return "redis-cluster://" + strings.Join(addrs, ",")
}

// Client returns a new cluster client.
func (rc *RedisCluster) Client() *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{rc.Nodes[0].Addr, rc.Nodes[1].Addr}})
}

// Stop kills every node and removes the cluster's directory.
func (rc *RedisCluster) Stop() {
	for _, n := range rc.Nodes {
		n.Kill()
	}
	_ = os.RemoveAll(rc.Dir)
}

// WaitReady waits until every live node says cluster_state:ok and sees
// three masters each with a replica.
func (rc *RedisCluster) WaitReady(ctx context.Context) error {
	for {
		err := rc.ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (rc *RedisCluster) ready(ctx context.Context) error {
	for _, n := range rc.Nodes {
		c := n.Client()
		info, err := c.ClusterInfo(ctx).Result()
		nodes, err2 := c.ClusterNodes(ctx).Result()
		c.Close()
		if err != nil || err2 != nil {
			return fmt.Errorf("node %s: %v %v", n.Addr, err, err2)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("node %s: cluster state not ok", n.Addr)
		}
		masters, replicas := 0, 0
		for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || strings.Contains(f[2], "fail") || f[7] != "connected" {
				continue
			}
			switch {
			case strings.Contains(f[2], "master"):
				masters++
			case strings.Contains(f[2], "slave"):
				replicas++
			}
		}
		if masters != 3 || replicas != 3 {
			return fmt.Errorf("node %s sees %d masters and %d replicas", n.Addr, masters, replicas)
		}
	}
	return nil
}

// MasterOf is the node that serves key's slot now.
func (rc *RedisCluster) MasterOf(ctx context.Context, key string) (*Server, error) {
	c := rc.Nodes[0].Client()
	defer c.Close()
	slot, err := c.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	for _, n := range rc.Nodes {
		nc := n.Client()
		slots, err := nc.ClusterShards(ctx).Result()
		nc.Close()
		if err != nil {
			continue
		}
		for _, sh := range slots {
			for _, r := range sh.Slots {
				if slot < r.Start || slot > r.End {
					continue
				}
				for _, node := range sh.Nodes {
					if node.Role == "master" && node.Health == "online" {
						return rc.byPort(node.Port), nil
					}
				}
			}
		}
		break
	}
	return nil, fmt.Errorf("no master for slot %d", slot)
}

func (rc *RedisCluster) byPort(port int64) *Server {
	for _, n := range rc.Nodes {
		if int64(n.Port) == port {
			return n
		}
	}
	return nil
}

// Heal starts every killed node again (it rejoins as a replica) and waits
// until the cluster has three masters with a replica each.
func (rc *RedisCluster) Heal(ctx context.Context) error {
	for _, n := range rc.Nodes {
		if Ping(n.Addr) != nil {
			if err := n.Start(); err != nil {
				return err
			}
		}
	}
	return rc.WaitReady(ctx)
}

// Slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag (the text between the first { and the next }, if not empty) or of
// the whole key, modulo 16384.
func Slot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}
