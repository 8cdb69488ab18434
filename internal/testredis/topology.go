package testredis

import (
	"sync"
	"testing"

	"crawlq/internal/redisproc"
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
