package testredis

import (
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/redisproc"
	"crawlq/internal/redisx"
)

var (
	sentOnce    sync.Once
	sent        *redisproc.SentinelGroup
	sentErr     error
	clusterOnce sync.Once
	cluster     *redisproc.RedisCluster
	clusterErr  error
)

// Sentinel returns the test binary's Sentinel group (one master, one
// replica, three sentinels), started on first use and stopped when the
// test binary exits. Tests that kill its master leave it with a master and
// a replica again (Heal).
func Sentinel(t testing.TB) *redisproc.SentinelGroup {
	t.Helper()
	sentOnce.Do(func() { sent, sentErr = redisproc.StartSentinel() })
	if sentErr != nil {
		t.Fatalf("testredis: sentinel group: %v", sentErr)
	}
	return sent
}

// SentinelClient returns the Sentinel group and a client of its master's
// db through the group's sentinels (as a redis-sentinel:// URL opens it),
// closed at the end of the test.
func SentinelClient(t testing.TB, db int) (*redisproc.SentinelGroup, redis.UniversalClient) {
	t.Helper()
	g := Sentinel(t)
	target, err := redisx.ParseURL(g.URL(db))
	if err != nil {
		t.Fatalf("testredis: sentinel url: %v", err)
	}
	rdb := target.NewClient()
	t.Cleanup(func() { rdb.Close() })
	return g, rdb
}

// Cluster returns the test binary's Redis Cluster (three masters with a
// replica each), started on first use and stopped when the test binary
// exits. Tests share it: each uses keys of its own (a Cluster has only db
// 0) and flushes nothing.
func Cluster(t testing.TB) *redisproc.RedisCluster {
	t.Helper()
	clusterOnce.Do(func() { cluster, clusterErr = redisproc.StartCluster() })
	if clusterErr != nil {
		t.Fatalf("testredis: cluster: %v", clusterErr)
	}
	return cluster
}
