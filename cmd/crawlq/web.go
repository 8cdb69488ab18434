package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"crawlq/proxies"
	"crawlq/results/pgsink"
	"crawlq/web"
)

// webFlags are the flags of `crawlq web`.
type webFlags struct {
	listen, auth, prometheus, config string
	postgres, tlsCert, tlsKey        string
	readOnly, perProxy, insecure     bool
	refresh                          time.Duration
}

func newWebCmd(a *app) *cobra.Command {
	f := webFlags{}
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve the dashboard: proxy pool at /, Asynq's UI at /monitoring/, /api/pool, /metrics",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runWeb(cmd.Context(), a, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", web.DefaultListen, "address to listen on (beyond loopback: --auth, or --insecure-no-auth)")
	// The env default is read at run time so --help never prints it.
	fl.StringVar(&f.auth, "auth", "", "USER:PASS for HTTP basic auth on every path; env CRAWLQ_WEB_AUTH")
	fl.BoolVar(&f.insecure, "insecure-no-auth", false, "serve beyond loopback without --auth (behind a proxy of your own that authenticates): whoever reaches the port can manage the queues")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS (with --tls-key)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	fl.BoolVar(&f.readOnly, "read-only", false, "make Asynq's UI view-only (no delete, pause, run, archive)")
	fl.StringVar(&f.prometheus, "prometheus", "", "Prometheus URL for the time-series charts of Asynq's UI")
	fl.DurationVar(&f.refresh, "refresh", 10*time.Second, "how often the page updates its numbers in place and the whole pool is read for the proxy table (less often when a read takes longer than a third of it)")
	fl.BoolVar(&f.perProxy, "metrics-per-proxy", false, "also export four series per (proxy, site) on /metrics: heavy (400,000 series at 100,000 proxies on one site); default aggregates per site and class only")
	configFlag(cmd, &f.config)
	postgresFlag(cmd, &f.postgres, "the sink's PostgreSQL: adds the latest price changes and an item search to the pool page, and item pages (/item/SITE/ID: price chart, observations, CSV)")
	return cmd
}

func runWeb(ctx context.Context, a *app, f webFlags) error {
	if f.auth == "" {
		f.auth = os.Getenv("CRAWLQ_WEB_AUTH")
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	bcfg, err := brokerConfig(f.config, log)
	if err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	cfg := web.Config{
		Redis: conn.Asynq, Broker: proxies.NewRedisBroker(conn.Client, bcfg),
		Auth: f.auth, InsecureNoAuth: f.insecure, TLSCert: f.tlsCert, TLSKey: f.tlsKey,
		ReadOnly: f.readOnly, PrometheusURL: f.prometheus, Logger: log, Refresh: f.refresh,
		MetricsPerProxy: f.perProxy, Sections: []web.Section{schedulesSection(conn.Client)},
	}
	if pg, _ := postgresURL(f.postgres, false); pg != "" {
		pool, err := pgsink.OpenPool(ctx, pg)
		if err != nil {
			return postgresErr(err)
		}
		defer pool.Close()
		cfg.Sections = append(cfg.Sections, web.ChangesSection(latestChanges(pool)),
			web.AlertsSection(func(ctx context.Context) (pgsink.AlertState, error) { return pgsink.AlertStatus(ctx, pool) }))
		cfg.Store = pool
	}
	srv, err := web.NewServer(cfg)
	if err != nil {
		return webErr(err)
	}
	defer srv.Close()
	return webErr(srv.Run(ctx, f.listen))
}

// webErr names the flags of the web server's configuration errors: the
// flag to fix, or for a listener refused without auth, both ways out.
func webErr(err error) error {
	switch {
	case errors.Is(err, web.ErrNoAuth):
		return fmt.Errorf("%w: set --auth USER:PASS (or CRAWLQ_WEB_AUTH), or --insecure-no-auth if a proxy of your own authenticates in front of it", err)
	case errors.Is(err, web.ErrBadAuth):
		return fmt.Errorf("--auth: %w", err)
	case errors.Is(err, web.ErrTLSPair), errors.Is(err, web.ErrTLSLoad):
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return err
}

// latestChanges lists the store's 20 newest price changes of the last 24 h.
func latestChanges(q pgsink.Querier) func(context.Context) ([]web.PriceChange, error) {
	return func(ctx context.Context) ([]web.PriceChange, error) {
		cs, err := pgsink.Changes(ctx, q, time.Now().Add(-24*time.Hour), 0, 20)
		out := make([]web.PriceChange, len(cs))
		for i, c := range cs {
			out[i] = web.PriceChange{At: c.At, Site: c.Site, ID: c.ID, Title: c.Title, From: c.From, To: c.To, ChangePct: c.ChangePct}
		}
		return out, err
	}
}
