package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"crawlq/internal/mask"
	"crawlq/results/pgsink"
	"crawlq/schedule"
)

// newAlertCmd is `crawlq alert`: the rules the sink fires alerts by.
func newAlertCmd(a *app) *cobra.Command {
	var pg string
	cmd := &cobra.Command{
		Use:   "alert",
		Short: "Alert rules: a webhook told when a price drops or an item is back in stock (the sink decides and delivers)",
	}
	cmd.PersistentFlags().StringVar(&pg, "postgres", "", "PostgreSQL URL of the sink's store (default $"+postgresEnv+")")
	cmd.AddCommand(newAlertAddCmd(a, &pg), newAlertListCmd(&pg), newAlertRemoveCmd(&pg), newAlertTestCmd(&pg))
	return cmd
}

// withAlertDB runs f on a migrated connection to --postgres.
func withAlertDB(ctx context.Context, flag string, f func(*pgx.Conn) error) error {
	url, err := postgresURL(flag, true)
	if err != nil {
		return err
	}
	conn, err := pgsink.Migrated(ctx, url)
	if err != nil {
		return postgresErr(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return f(conn)
}

type alertAddFlags struct {
	site, ids, query, schedule, below, dropPct, webhook string
	backInStock                                         bool
	// given are the flags of ids, query and schedule given on the command
	// line (an empty value given is refused, not read as "every item").
	given map[string]bool
}

func newAlertAddCmd(a *app, pg *string) *cobra.Command {
	var f alertAddFlags
	cmd := &cobra.Command{
		Use:   "add NAME --site S [--ids a,b | --query Q | --schedule NAME] [--drop-pct 10 | --below 1999] [--back-in-stock] --webhook URL",
		Short: "Add an alert rule",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.given = givenFlags(cmd, "ids", "query", "schedule")
			r, err := f.rule(args[0])
			if err != nil {
				return err
			}
			if err := checkRuleSchedule(cmd.Context(), a, r); err != nil {
				return err
			}
			return withAlertDB(cmd.Context(), *pg, func(conn *pgx.Conn) error {
				if err := knownSite(cmd.Context(), conn, r.Site); err != nil {
					return fmt.Errorf("--site: %w", err)
				}
				if err := pgsink.AddRule(cmd.Context(), conn, r); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "alert %s added: %s → %s\n", r.Name, condition(r), mask.URL(r.Webhook))
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.site, "site", "", "the site of the items (required)")
	fl.StringVar(&f.ids, "ids", "", "the items' ids, comma-separated")
	fl.StringVar(&f.query, "query", "", "the items whose title holds every word of Q")
	fl.StringVar(&f.schedule, "schedule", "", "the items the schedule NAME crawls")
	fl.StringVar(&f.dropPct, "drop-pct", "", "fire on a fall of at least this many percent (10 or 10%)")
	fl.StringVar(&f.below, "below", "", "fire when the price falls to this many roubles or under (e.g. 1999 or 1999.50)")
	fl.BoolVar(&f.backInStock, "back-in-stock", false, "fire when an item out of stock is in stock again")
	fl.StringVar(&f.webhook, "webhook", "", "the URL the alert's JSON is posted to (required)")
	_ = cmd.MarkFlagRequired("site")
	_ = cmd.MarkFlagRequired("webhook")
	return cmd
}

// rule is the flags as a rule, or an error naming the flag.
func (f alertAddFlags) rule(name string) (pgsink.Rule, error) {
	r := pgsink.Rule{Name: name, Site: strings.ToLower(strings.TrimSpace(f.site)), Query: f.query,
		Schedule: strings.TrimSpace(f.schedule), BackInStock: f.backInStock, Webhook: f.webhook}
	for _, id := range strings.Split(f.ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			r.IDs = append(r.IDs, id)
		}
	}
	switch {
	case f.given["ids"] && len(r.IDs) == 0:
		return r, fmt.Errorf("--ids %q: no id in it (leave --ids out to watch every item of the site)", f.ids)
	case f.given["query"] && strings.TrimSpace(f.query) == "":
		return r, fmt.Errorf("--query %q: no word in it (leave --query out to watch every item of the site)", f.query)
	case f.given["schedule"] && r.Schedule == "":
		return r, fmt.Errorf("--schedule %q: no name in it", f.schedule)
	}
	if f.dropPct != "" {
		v, err := pgsink.ParsePercent(f.dropPct)
		if err != nil {
			return r, fmt.Errorf("--drop-pct %q: %w", f.dropPct, err)
		}
		if v == 0 {
			return r, fmt.Errorf("--drop-pct %q: want a percent in (0, 100)", f.dropPct)
		}
		r.DropPct = v
	}
	if f.below != "" {
		v, err := strconv.ParseFloat(f.below, 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return r, fmt.Errorf("--below %q: want a price in roubles, e.g. 1999", f.below)
		}
		r.Below = int64(math.Round(v * 100))
	}
	if err := r.Check(); err != nil {
		return r, flagNamed(err)
	}
	return r, nil
}

// givenFlags says which of names were set on cmd's command line.
func givenFlags(cmd *cobra.Command, names ...string) map[string]bool {
	given := map[string]bool{}
	for _, n := range names {
		given[n] = cmd.Flags().Changed(n)
	}
	return given
}

// checkRuleSchedule refuses a rule whose --schedule names no schedule in
// Redis, or one that crawls none of the rule's site: its rule would
// never fire.
func checkRuleSchedule(ctx context.Context, a *app, r pgsink.Rule) error {
	if r.Schedule == "" {
		return nil
	}
	conn, err := a.redis(ctx)
	if err != nil {
		return fmt.Errorf("--schedule %s: cannot check that it exists: %w", r.Schedule, err)
	}
	defer conn.Close()
	s, err := schedule.NewStore(conn.Client).Get(ctx, r.Schedule)
	if errors.Is(err, schedule.ErrNotFound) {
		return fmt.Errorf("--schedule: %w (see `crawlq schedule list`)", err)
	}
	if err != nil {
		return fmt.Errorf("--schedule %s: %w", r.Schedule, err)
	}
	for _, j := range s.Jobs {
		if j.Site == r.Site {
			return nil
		}
	}
	return fmt.Errorf("--schedule %s: it crawls no %s item, so the rule would never fire", r.Schedule, r.Site)
}

// flagNamed puts "--" before the flag a rule error names.
func flagNamed(err error) error {
	s := err.Error()
	for _, f := range []string{"drop-pct", "below", "webhook", "site", "ids"} {
		if strings.HasPrefix(s, f) {
			return fmt.Errorf("--%s", s)
		}
	}
	return err
}

// condition is what fires r, in words.
func condition(r pgsink.Rule) string {
	var parts []string
	switch {
	case r.DropPct > 0:
		parts = append(parts, "drop ≥ "+strconv.FormatFloat(r.DropPct, 'f', -1, 64)+"%")
	case r.Below > 0:
		parts = append(parts, "price ≤ "+rub(r.Below))
	}
	if r.BackInStock {
		parts = append(parts, "back in stock")
	}
	return items(r) + ": " + strings.Join(parts, " or ")
}

// items is which items r watches, in words.
func items(r pgsink.Rule) string {
	switch {
	case len(r.IDs) > 0:
		return r.Site + " " + strings.Join(r.IDs, ",")
	case r.Query != "":
		return r.Site + " titles with " + strconv.Quote(r.Query)
	case r.Schedule != "":
		return r.Site + " items of schedule " + r.Schedule
	}
	return "every " + r.Site + " item"
}

func newAlertListCmd(pg *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the alert rules (webhook secrets masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAlertDB(cmd.Context(), *pg, func(conn *pgx.Conn) error {
				rs, err := pgsink.Rules(cmd.Context(), conn)
				if err != nil {
					return err
				}
				for i := range rs {
					rs[i].Webhook = mask.URL(rs[i].Webhook)
				}
				if asJSON {
					return jsonLine(cmd.OutOrStdout(), rs)
				}
				return writeRules(cmd.OutOrStdout(), rs)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func writeRules(w io.Writer, rs []pgsink.Rule) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRULE\tWEBHOOK")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, condition(r), r.Webhook)
	}
	if len(rs) == 0 {
		fmt.Fprintln(tw, "(no alert rules)")
	}
	return tw.Flush()
}

func newAlertRemoveCmd(pg *string) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an alert rule and its undelivered alerts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAlertDB(cmd.Context(), *pg, func(conn *pgx.Conn) error {
				if err := pgsink.RemoveRule(cmd.Context(), conn, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "alert %s removed\n", args[0])
				return nil
			})
		},
	}
}

func newAlertTestCmd(pg *string) *cobra.Command {
	return &cobra.Command{
		Use:   "test NAME",
		Short: "Post one test alert to the rule's webhook now and print its answer's status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAlertDB(cmd.Context(), *pg, func(conn *pgx.Conn) error {
				r, err := pgsink.GetRule(cmd.Context(), conn, args[0])
				if err != nil {
					return err
				}
				status, err := pgsink.Post(cmd.Context(), &http.Client{Timeout: 10 * time.Second}, r.Webhook, testAlert(r))
				if err != nil {
					return fmt.Errorf("alert %s: %w", r.Name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "alert %s: %s answered %d %s\n", r.Name, mask.URL(r.Webhook),
					status, http.StatusText(status))
				return nil
			})
		},
	}
}

// testAlert is the body `alert test` posts: a made-up 20% fall.
func testAlert(r pgsink.Rule) pgsink.Alert {
	now := time.Now().UTC()
	in := true
	return pgsink.Alert{Rule: r.Name, Site: r.Site, ID: "test", Title: "crawlq alert test", Currency: "RUB",
		OldPrice: 250000, NewPrice: 200000, InStock: &in, WasInStock: &in, ObservedAt: now,
		Key: "test:" + r.Name + ":" + strconv.FormatInt(now.UnixNano(), 10), Test: true}
}
