package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ServeMetrics serves g at /metrics on addr until ctx ends, with /healthz
// and /readyz (every check passes) beside it. It returns an error at once
// if addr cannot be bound, and nil after a clean shutdown.
func ServeMetrics(ctx context.Context, addr string, g prometheus.Gatherer, checks ...Check) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	return serveMetrics(ctx, l, g, checks...)
}

func serveMetrics(ctx context.Context, l net.Listener, g prometheus.Gatherer, checks ...Check) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mountHealth(mux, checks)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics: serve: %w", err)
	case <-ctx.Done():
		return shutdown(hs, errc)
	}
}
