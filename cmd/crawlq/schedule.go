package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"crawlq/schedule"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/web"
)

func newScheduleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Manage schedules: jobs queued again on a cron spec (run them with `crawlq scheduler`)",
	}
	cmd.AddCommand(newScheduleAddCmd(a), newScheduleListCmd(a), newScheduleRemoveCmd(a),
		newSchedulePauseCmd(a, "pause", true), newSchedulePauseCmd(a, "resume", false))
	return cmd
}

type scheduleAddFlags struct {
	enqueueFlags
	cron    string
	replace bool
}

func newScheduleAddCmd(a *app) *cobra.Command {
	var f scheduleAddFlags
	cmd := &cobra.Command{
		Use:   "add NAME --cron SPEC [--] SITE KIND ARGS… | add NAME --cron SPEC -f jobs.jsonl",
		Short: "Add a schedule: the jobs (as `enqueue` takes them, validated the same way) queued at every tick",
		Example: `  crawlq schedule add sneakers --cron "0 */4 * * *" -- wildberries search "кроссовки" --pages 3 --follow
  crawlq schedule add phones --cron "@every 2h" -- avito search --location moskva "iphone 15"
  crawlq schedule add catalog --cron @daily -f jobs.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runScheduleAdd(cmd, a, &f, args) },
	}
	fl := cmd.Flags()
	f.bindJob(fl)
	fl.StringVar(&f.cron, "cron", "", `when to run, in UTC: "MIN HOUR DOM MON DOW", @hourly, @daily or "@every DURATION" (required)`)
	fl.BoolVar(&f.replace, "replace", false, "replace a schedule of the same name (its run history stays)")
	_ = cmd.MarkFlagRequired("cron")
	return cmd
}

func runScheduleAdd(cmd *cobra.Command, a *app, f *scheduleAddFlags, args []string) error {
	jobArgs, err := f.jobArgs(cmd, args)
	if err != nil {
		return err
	}
	loaded, err := tasks.LoadConfig(f.config)
	if err != nil {
		return err
	}
	if err := checkKind(loaded.Sites, f.file, jobArgs); err != nil {
		return err
	}
	s, err := f.schedule(loaded.Sites, args[0], jobArgs)
	if err != nil {
		return err // validated before Redis is touched
	}
	conn, err := a.redis(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	err = schedule.NewStore(conn.Client).Add(cmd.Context(), s, f.replace)
	if errors.Is(err, schedule.ErrExists) {
		return fmt.Errorf("%w (remove it first, or add with --replace)", err)
	}
	if err != nil {
		return err
	}
	spec, _ := s.Spec()
	fmt.Fprintf(cmd.OutOrStdout(), "schedule %s: %d job(s), %s, next tick %s (run `crawlq scheduler`)\n",
		s.Name, len(s.Jobs), s.Cron, spec.Next(time.Now()).Format(time.RFC3339))
	return nil
}

// schedule is the schedule name of the jobs jobArgs and the flags
// describe, validated against sites.
func (f *scheduleAddFlags) schedule(sites *site.Registry, name string, jobArgs []string) (schedule.Schedule, error) {
	jobs, where, err := f.jobs(jobArgs)
	if err != nil {
		return schedule.Schedule{}, err
	}
	s, err := schedule.New(sites, name, f.cron, jobs, func(i int) string { return where[i] })
	var bad *schedule.SpecError
	if errors.As(err, &bad) {
		return schedule.Schedule{}, fmt.Errorf("--cron: %w", err)
	}
	return s, err
}

// jobArgs are the SITE KIND ARGS… of the command line: after NAME, and
// after "--", where enqueue's flags (--pages, --follow…) are read too.
func (f *scheduleAddFlags) jobArgs(cmd *cobra.Command, args []string) ([]string, error) {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 {
		return args[1:], nil
	}
	if dash != 1 {
		return nil, fmt.Errorf("want NAME before --, got %d arguments", dash)
	}
	fl := cmd.Flags()
	if err := fl.Parse(args[dash:]); err != nil {
		return nil, fmt.Errorf("after --: %w", err)
	}
	return fl.Args(), nil
}

func newScheduleListCmd(a *app) *cobra.Command {
	asJSON := false
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the schedules: spec, jobs, next and last run, its outcome, skipped ticks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			insp := asynq.NewInspector(conn.Asynq)
			defer insp.Close()
			now := time.Now()
			ss, err := schedule.Statuses(cmd.Context(), insp, conn.Client, now)
			if err != nil {
				return err
			}
			return writeSchedules(cmd.OutOrStdout(), ss, now, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the schedules as JSON")
	return cmd
}

func writeSchedules(w io.Writer, ss []schedule.Status, now time.Time, asJSON bool) error {
	if !asJSON {
		return schedule.WriteTable(w, ss, now)
	}
	if ss == nil {
		ss = []schedule.Status{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ss)
}

func newScheduleRemoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a schedule (jobs it queued stay queued)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			if err := schedule.NewStore(conn.Client).Remove(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schedule %s removed\n", args[0])
			return nil
		},
	}
}

func newSchedulePauseCmd(a *app, verb string, paused bool) *cobra.Command {
	short := "Pause a schedule: its ticks queue nothing until resumed"
	if !paused {
		short = "Resume a paused schedule from its next tick"
	}
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			if err := schedule.NewStore(conn.Client).SetPaused(cmd.Context(), args[0], paused); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schedule %s %sd\n", args[0], verb)
			return nil
		},
	}
}

// writeStatusSchedules is the schedules' part of `crawlq status`: nothing
// while there are none.
func writeStatusSchedules(w io.Writer, ss []schedule.Status, now time.Time) error {
	if len(ss) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return schedule.WriteTable(w, ss, now)
}

// schedulesSection is the dashboard's part of the pool page that shows the
// schedules.
func schedulesSection(rdb redis.UniversalClient) web.Section {
	return web.Section{ID: "schedules", Title: "Schedules", Render: func(ctx context.Context) (template.HTML, error) {
		insp := asynq.NewInspectorFromRedisClient(rdb)
		defer insp.Close()
		now := time.Now()
		ss, err := schedule.Statuses(ctx, insp, rdb, now)
		if err != nil {
			return "", err
		}
		return schedule.HTML(ss, now)
	}}
}
