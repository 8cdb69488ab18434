package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask"
)

// Check is one thing a process needs to do its work, asked by /readyz:
// Ping returns nil when it answers.
type Check struct {
	// Name says what was asked ("redis", "postgres") in a failed answer.
	Name string
	// Ping asks it, within the context's deadline.
	Ping func(ctx context.Context) error
}

// RedisCheck is the check that rdb answers a PING.
func RedisCheck(rdb redis.UniversalClient) Check {
	return Check{Name: "redis", Ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }}
}

// checkTimeout bounds one /readyz answer: a kubelet probe waits 1 s by
// default, so a check that hangs must fail rather than hold the probe.
const checkTimeout = 2 * time.Second

// mountHealth serves /healthz and /readyz on mux. /healthz answers 200 as
// long as the process serves HTTP and asks nothing else: a Redis outage
// must not get a live process restarted. /readyz answers 200 when every
// check passes and 503 naming the first that failed, its error masked.
func mountHealth(mux *http.ServeMux, checks []Check) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		for _, c := range checks {
			if err := c.Ping(ctx); err != nil {
				http.Error(w, "not ready: "+c.Name+": "+mask.Text(err.Error()), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
}
