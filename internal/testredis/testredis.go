// Package testredis finds a real Redis for tests: CRAWLQ_TEST_REDIS if set,
// else 127.0.0.1:6379 if it answers, else a redis-server from PATH started on
// a free port in a temp dir (stopped when the test binary exits), else a
// failure that says how to install Redis.
//
// Each test package passes its own DB number so packages run in parallel
// without touching each other's keys; Client flushes that DB per test.
package testredis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/redisproc"
)

// DB numbers reserved per test package, so `go test ./...` runs packages in
// parallel on one Redis without collisions. Add a constant for a new package.
const (
	DBProxies   = 1
	DBSessions  = 2
	DBTasks     = 3
	DBWeb       = 4
	DBCmd       = 5
	DBSchedule  = 6
	DBHeartbeat = 7
	DBTestbed   = 8
	DBBench     = 9
	DBE2E       = 10
	DBChaos     = 11
	DBSecrets   = 12
	DBResults   = 13
	DBHostile   = 14
	DBSink      = 15
)

var (
	once    sync.Once
	addr    string
	findErr error
)

// Addr returns host:port of a Redis usable by tests, starting one if needed.
func Addr(t testing.TB) string {
	t.Helper()
	once.Do(func() { addr, findErr = find() })
	if findErr != nil {
		t.Fatalf("testredis: %v", findErr)
	}
	return addr
}

// URL returns a redis:// URL for the given DB of the test Redis.
func URL(t testing.TB, db int) string {
	return fmt.Sprintf("redis://%s/%d", Addr(t), db)
}

// Client returns a client on the given DB, flushed before the test and
// closed after it.
func Client(t testing.TB, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: Addr(t), DB: db})
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("testredis: flush db %d: %v", db, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// NewClient returns one more client on the same DB without flushing it, as a
// second "server" of a cluster would have. Closed after the test.
func NewClient(t testing.TB, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: Addr(t), DB: db})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func find() (string, error) {
	if a := os.Getenv("CRAWLQ_TEST_REDIS"); a != "" {
		if err := redisproc.Ping(a); err != nil {
			return "", fmt.Errorf("CRAWLQ_TEST_REDIS=%s does not answer: %w", a, err)
		}
		return a, nil
	}
	if redisproc.Ping("127.0.0.1:6379") == nil {
		return "127.0.0.1:6379", nil
	}
	return start()
}

// start runs redis-server on a free loopback port (redisproc.StartServer:
// another port when the one found free was taken meanwhile). The process
// is tied to the test binary's lifetime: it is asked to exit when its
// parent dies.
func start() (string, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "", fmt.Errorf("no Redis at 127.0.0.1:6379 and no redis-server in PATH: " +
			"install it (apt-get install redis-server) or set CRAWLQ_TEST_REDIS=host:port")
	}
	dir, err := os.MkdirTemp("", "crawlq-redis-")
	if err != nil {
		return "", err
	}
	s, err := redisproc.StartServer(dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return "", err
	}
	return s.Addr, nil
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1
// (redisproc.FreePort).
func FreePort() (int, error) { return redisproc.FreePort() }

// NewClientAt returns a client for addr and db, for child processes of a
// test that got the address from their parent.
func NewClientAt(addr string, db int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DB: db})
}
