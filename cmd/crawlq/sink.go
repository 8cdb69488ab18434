package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"crawlq/internal/heartbeat"
	"crawlq/results"
	"crawlq/results/pgsink"
	"crawlq/web"
)

// postgresEnv is where --postgres is read from when the flag is not given.
const postgresEnv = "CRAWLQ_POSTGRES"

// postgresFlag adds --postgres (default $CRAWLQ_POSTGRES) to cmd.
func postgresFlag(cmd *cobra.Command, dst *string, what string) {
	cmd.Flags().StringVar(dst, "postgres", "", what+" (default $"+postgresEnv+")")
}

// postgresURL is the --postgres value or $CRAWLQ_POSTGRES; required says
// whether its absence is an error.
func postgresURL(flag string, required bool) (string, error) {
	if flag == "" {
		flag = os.Getenv(postgresEnv)
	}
	if flag == "" && required {
		return "", fmt.Errorf("--postgres: required (a postgres:// URL, or set $%s)", postgresEnv)
	}
	return flag, nil
}

// postgresErr names --postgres in err when the value is no PostgreSQL
// URL (pgsink.ErrBadURL); other errors stay as they are.
func postgresErr(err error) error {
	if errors.Is(err, pgsink.ErrBadURL) {
		return fmt.Errorf("--postgres: %w", err)
	}
	return err
}

type sinkFlags struct {
	postgres    string
	consumer    string
	batch       int
	claimIdle   time.Duration
	metricsAddr string
	detach      bool
	// alertRetryMax caps the wait between two posts of one alert.
	alertRetryMax time.Duration
	noAlerts      bool
}

func newSinkCmd(a *app) *cobra.Command {
	var f sinkFlags
	cmd := &cobra.Command{
		Use:   "sink --postgres URL",
		Short: "Drain the results stream into PostgreSQL (items + price history) until SIGTERM/SIGINT",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSink(cmd, a, f) },
	}
	postgresFlag(cmd, &f.postgres, "PostgreSQL URL to write to")
	fl := cmd.Flags()
	fl.StringVar(&f.consumer, "consumer", "", "this sink's name in the consumer group (default host-pid-start)")
	fl.IntVar(&f.batch, "batch", 5000, "most stream entries written in one transaction")
	fl.DurationVar(&f.claimIdle, "claim-idle", 30*time.Second, "take over entries another sink has held unacknowledged this long (it died)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve the sink's Prometheus metrics, /healthz and /readyz on ADDR (e.g. :9101)")
	fl.DurationVar(&f.alertRetryMax, "alert-retry-max", 5*time.Minute, "longest wait between two posts of an alert to a failing webhook (the waits double from 1s)")
	fl.BoolVar(&f.noAlerts, "no-alert-sender", false, "decide alerts but leave their delivery to another sink")
	fl.BoolVar(&f.detach, "detach", false, "remove the sink group and its mark from the stream and exit: the stream goes back to its MAXLEN bound")
	return cmd
}

func runSink(cmd *cobra.Command, a *app, f sinkFlags) error {
	ctx := cmd.Context()
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if f.detach {
		if err := results.UnmarkSink(ctx, conn.Client); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), "sink group removed; the results stream is bounded by MAXLEN again")
		return nil
	}
	pg, err := postgresURL(f.postgres, true)
	if err != nil {
		return err
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	defer log.Sync()
	reg := prometheus.NewRegistry()
	s := pgsink.New(pgsink.Config{Redis: conn.Client, Postgres: pg, Consumer: f.consumer, Batch: f.batch,
		ClaimIdle: f.claimIdle, Logger: log, Metrics: pgsink.NewMetrics(reg, conn.Client)})
	rec := heartbeat.Self(heartbeat.RoleSink, s.Consumer())
	return sinkStopped(cmd, s, keepAlive(ctx, conn.Client, rec, log, func(ctx context.Context) error {
		return sinkParts(ctx, f, pg, reg, s, log, web.RedisCheck(conn.Client))
	}))
}

// sinkParts runs the sink, its metrics listener (with the health probes:
// /readyz asks redis and PostgreSQL) and its alert sender until ctx ends
// or one of them fails.
func sinkParts(ctx context.Context, f sinkFlags, pg string, reg *prometheus.Registry, s *pgsink.Sink, log *zap.Logger,
	redisReady web.Check) error {
	g, gctx := errgroup.WithContext(ctx)
	if f.metricsAddr != "" {
		pool, err := pgsink.OpenPool(ctx, pg) // connects on the first probe
		if err != nil {
			return postgresErr(err)
		}
		defer pool.Close()
		pgReady := web.Check{Name: "postgres", Ping: pool.Ping}
		g.Go(func() error { return web.ServeMetrics(gctx, f.metricsAddr, reg, redisReady, pgReady) })
	}
	g.Go(func() error { return postgresErr(s.Run(gctx)) })
	if !f.noAlerts {
		snd := pgsink.NewSender(pgsink.SenderConfig{Postgres: pg, RetryMax: f.alertRetryMax, Logger: log.Named("alerts"),
			Metrics: s.Metrics()})
		g.Go(func() error {
			select {
			case <-s.Ready(): // the schema is there
				return snd.Run(gctx)
			case <-gctx.Done():
				return nil
			}
		})
	}
	return g.Wait()
}

// sinkStopped says how the sink ended: on err (a permanent PostgreSQL
// error, or the metrics listener's) only err, on one line, for main to
// print; else the observations written.
func sinkStopped(cmd *cobra.Command, s *pgsink.Sink, err error) error {
	if err != nil {
		if n := s.Rows(); n > 0 {
			return fmt.Errorf("%w (after %d observations written)", err, n)
		}
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "sink stopped: %d observations written\n", s.Rows())
	return nil
}
