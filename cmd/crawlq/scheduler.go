package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"crawlq/internal/heartbeat"
	"crawlq/schedule"
	"crawlq/tasks"
	"crawlq/web"
)

// schedulerFlags are the flags of `crawlq scheduler`.
type schedulerFlags struct {
	config, metricsAddr string
	sync                time.Duration
}

func newSchedulerCmd(a *app) *cobra.Command {
	var f schedulerFlags
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the schedules: each tick's jobs queued at the NEXT time `schedule list` shows; run two for availability, each tick is queued once",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runScheduler(cmd.Context(), a, f) },
	}
	cmd.Flags().StringVar(&f.config, "config", "", "YAML config file (site overrides: the queues jobs go to)")
	cmd.Flags().DurationVar(&f.sync, "sync", schedule.DefaultSyncInterval, "how often the schedules are read again: an added, removed, paused or resumed schedule applies within it")
	cmd.Flags().StringVar(&f.metricsAddr, "metrics-addr", "", "serve /healthz, /readyz and the process's Go metrics on ADDR (e.g. :9102)")
	return cmd
}

func runScheduler(ctx context.Context, a *app, f schedulerFlags) error {
	log, err := a.logger()
	if err != nil {
		return err
	}
	loaded, err := tasks.LoadConfig(f.config)
	if err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rec := heartbeat.Self(heartbeat.RoleScheduler, "")
	log.Info("scheduler started", zap.String("id", rec.ServerID), zap.String("redis", conn.URL), zap.Duration("sync", f.sync))
	err = keepAlive(ctx, conn.Client, rec, log, func(ctx context.Context) error {
		return schedulerParts(ctx, f, schedule.Config{RDB: conn.Client, Sites: loaded.Sites, SyncInterval: f.sync, Logger: log})
	})
	log.Info("scheduler stopped", zap.String("id", rec.ServerID), zap.Error(err))
	return err
}

// schedulerParts runs the schedules and, on --metrics-addr, the health
// probes (/readyz: the Redis answers) until ctx ends or one fails.
func schedulerParts(ctx context.Context, f schedulerFlags, cfg schedule.Config) error {
	g, gctx := errgroup.WithContext(ctx)
	if f.metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		g.Go(func() error { return web.ServeMetrics(gctx, f.metricsAddr, reg, web.RedisCheck(cfg.RDB)) })
	}
	g.Go(func() error { return schedule.Run(gctx, cfg) })
	return g.Wait()
}
