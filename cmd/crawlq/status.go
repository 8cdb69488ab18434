package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hibiken/asynq"
	"github.com/spf13/cobra"

	"crawlq/proxies"
	"crawlq/results"
	"crawlq/results/pgsink"
	"crawlq/schedule"
	"crawlq/web"
)

func newStatusCmd(a *app) *cobra.Command {
	asJSON, config, pg := false, "", ""
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show queues per site, the proxy pool per site and live servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), a, cmd.OutOrStdout(), asJSON, config, pg)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the snapshot as JSON (the numbers /metrics reports)")
	configFlag(cmd, &config)
	postgresFlag(cmd, &pg, "PostgreSQL URL of the sink's store, for a line when alerts fail")
	return cmd
}

func runStatus(ctx context.Context, a *app, out io.Writer, asJSON bool, config, pg string) error {
	bcfg, err := brokerConfig(config, nil)
	if err != nil {
		return err
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	insp := asynq.NewInspector(conn.Asynq)
	defer insp.Close()
	st, err := web.Collect(ctx, insp, proxies.NewRedisBroker(conn.Client, bcfg))
	if err != nil {
		return err
	}
	if err := web.JoinHeartbeats(ctx, conn.Client, st); err != nil {
		return err
	}
	if err := web.JoinResults(ctx, conn.Client, st); err != nil {
		return err
	}
	scheds, err := schedule.Statuses(ctx, insp, conn.Client, st.At)
	if err != nil {
		return err
	}
	alerts, err := alertStatus(ctx, pg)
	if errors.Is(err, pgsink.ErrBadURL) {
		return postgresErr(err)
	}
	pgErr := errText(err) // PostgreSQL is optional here: its failure is one line
	return printStatus(out, asJSON, statusJSON{Status: st, Schedules: scheds, Alerts: alerts, PostgresError: pgErr})
}

// printStatus writes the status as text, or as JSON.
func printStatus(out io.Writer, asJSON bool, s statusJSON) error {
	st, scheds, alerts, pgErr := s.Status, s.Schedules, s.Alerts, s.PostgresError
	if !asJSON {
		if err := st.WriteTable(out); err != nil {
			return err
		}
		writeStatusRejected(out, st.Results)
		writeStatusAlerts(out, alerts)
		if pgErr != "" {
			fmt.Fprintf(out, "postgres: %s (alerts not shown)\n", pgErr)
		}
		return writeStatusSchedules(out, scheds, st.At)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// alertStatus reads the alert figures from --postgres (or
// $CRAWLQ_POSTGRES); nil without either.
func alertStatus(ctx context.Context, flag string) (*pgsink.AlertState, error) {
	url, _ := postgresURL(flag, false)
	if url == "" {
		return nil, nil
	}
	conn, err := pgsink.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st, err := pgsink.AlertStatus(ctx, conn)
	if err != nil {
		return nil, pgsink.SchemaHint(err)
	}
	return &st, nil
}

// errText is err's text; "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// writeStatusAlerts says, when alerts fail or were given up, how many
// wait and the last error (its webhook masked), and which rules fail.
func writeStatusAlerts(w io.Writer, st *pgsink.AlertState) {
	if st == nil || st.Failing == 0 && st.GivenUp == 0 {
		return
	}
	fmt.Fprintf(w, "alerts: failing: %d pending (%d failed at least once), %d given up, %d delivered; last error %s: %s\n",
		st.Pending, st.Failing, st.GivenUp, st.Delivered, st.LastErrorAt.Format(time.RFC3339), st.LastError)
	for _, r := range st.PerRule {
		if r.State() != "ok" {
			fmt.Fprintf(w, "  rule %s (%s): %s: %d failing, %d given up; last error %s: %s\n",
				r.Rule, r.Site, r.State(), r.Failing, r.GivenUp, r.LastErrorAt.Format(time.RFC3339), r.LastError)
		}
	}
}

// statusJSON is `status --json`: the snapshot and the schedules.
type statusJSON struct {
	*web.Status
	Schedules []schedule.Status `json:"schedules"`
	// Alerts are the alert figures, with --postgres.
	Alerts *pgsink.AlertState `json:"alerts,omitempty"`
	// PostgresError says why --postgres could not be read (the rest of
	// the status is there all the same).
	PostgresError string `json:"postgres_error,omitempty"`
}

// writeStatusRejected says how many results stream entries the sink kept
// in its rejected table (not items: not JSON, no id), with a sink or once
// there are any.
func writeStatusRejected(w io.Writer, r *results.Backlog) {
	if r != nil && (r.Sink || r.Rejected > 0) {
		fmt.Fprintf(w, "results: %d rejected by the sink (not items: not JSON, or no id), kept in its PostgreSQL table rejected\n", r.Rejected)
	}
}
