package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"crawlq/internal/heartbeat"
	"crawlq/schedule"
	"crawlq/tasks"
)

func newSchedulerCmd(a *app) *cobra.Command {
	var config string
	var sync time.Duration
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run the schedules: each tick's jobs queued at the NEXT time `schedule list` shows; run two for availability, each tick is queued once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := a.logger()
			if err != nil {
				return err
			}
			loaded, err := tasks.LoadConfig(config)
			if err != nil {
				return err
			}
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			rec := heartbeat.Self(heartbeat.RoleScheduler, "")
			log.Info("scheduler started", zap.String("id", rec.ServerID), zap.String("redis", conn.URL), zap.Duration("sync", sync))
			err = keepAlive(cmd.Context(), conn.Client, rec, log, func(ctx context.Context) error {
				return schedule.Run(ctx, schedule.Config{RDB: conn.Client, Sites: loaded.Sites, SyncInterval: sync, Logger: log})
			})
			log.Info("scheduler stopped", zap.String("id", rec.ServerID), zap.Error(err))
			return err
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "YAML config file (site overrides: the queues jobs go to)")
	cmd.Flags().DurationVar(&sync, "sync", schedule.DefaultSyncInterval, "how often the schedules are read again: an added, removed, paused or resumed schedule applies within it")
	return cmd
}
