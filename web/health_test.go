package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
)

// serveChecks serves ServeMetrics's mux with checks on a free loopback
// port until the test ends and returns its base URL.
func serveChecks(t *testing.T, checks ...Check) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveMetrics(ctx, l, prometheus.NewRegistry(), checks...) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveMetrics: %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return "http://" + l.Addr().String()
}

func TestHealthzAndReadyz(t *testing.T) {
	deadRedis := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Password: masktest.RedisPassword, MaxRetries: -1})
	defer deadRedis.Close()
	pgURL := "postgres://crawlq:" + masktest.PostgresPassword + "@127.0.0.1:1/crawlq"
	deadPG := Check{Name: "postgres", Ping: func(context.Context) error {
		return errors.New("failed to connect to " + pgURL + ": connection refused")
	}}
	tests := []struct {
		name      string
		checks    []Check
		readyCode int
		readyHas  string
	}{
		{name: "no checks", readyCode: http.StatusOK, readyHas: "ok"},
		{name: "redis answers", checks: []Check{RedisCheck(testredis.Client(t, testredis.DBWeb))},
			readyCode: http.StatusOK, readyHas: "ok"},
		{name: "redis down", checks: []Check{RedisCheck(deadRedis)},
			readyCode: http.StatusServiceUnavailable, readyHas: "not ready: redis: "},
		{name: "postgres down after redis", checks: []Check{RedisCheck(testredis.Client(t, testredis.DBWeb)), deadPG},
			readyCode: http.StatusServiceUnavailable, readyHas: "not ready: postgres: failed to connect to postgres://crawlq:***@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := serveChecks(t, tt.checks...)
			if code, body := get(t, http.MethodGet, base+"/healthz", ""); code != http.StatusOK {
				t.Errorf("/healthz: %d %q, want 200 whatever the dependencies say", code, body)
			}
			code, body := get(t, http.MethodGet, base+"/readyz", "")
			if code != tt.readyCode || !strings.Contains(body, tt.readyHas) {
				t.Errorf("/readyz: %d %q, want %d with %q", code, body, tt.readyCode, tt.readyHas)
			}
			masktest.Check(t, "/readyz", body)
		})
	}
}

func TestHealthProbesNeedNoAuth(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, Auth: "admin:pw"})
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, http.MethodGet, base+p, ""); code != http.StatusOK {
			t.Errorf("GET %s without credentials: %d %q, want 200", p, code, body)
		}
	}
	if code, _ := get(t, http.MethodGet, base+"/", ""); code != http.StatusUnauthorized {
		t.Errorf("GET / without credentials: %d, want 401", code)
	}
}

func TestDashboardReadyzAsksRedis(t *testing.T) {
	base := startServer(t, Config{Redis: asynq.RedisClientOpt{Addr: "127.0.0.1:1"}})
	if code, _ := get(t, http.MethodGet, base+"/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz: %d, want 200 with Redis down", code)
	}
	if code, body := get(t, http.MethodGet, base+"/readyz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "redis") {
		t.Errorf("/readyz: %d %q, want 503 naming redis", code, body)
	}
}
