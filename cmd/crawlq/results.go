package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"crawlq/results"
	"crawlq/results/pgsink"
)

func newResultsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "results", Short: "Export or follow crawled items"}
	cmd.AddCommand(newResultsExportCmd(a), newResultsTailCmd(a), newResultsChangesCmd(a))
	return cmd
}

func newResultsExportCmd(a *app) *cobra.Command {
	var site, format, pg, since string
	var all bool
	cmd := &cobra.Command{
		Use:   "export [--site S] [--format jsonl|csv] [--all] [--postgres URL [--since D]]",
		Short: "Write the results (the stream, or PostgreSQL with --postgres) to stdout, one item per (site, id) unless --all",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := results.ParseFormat(format)
			if errors.Is(err, results.ErrUnknownFormat) {
				return fmt.Errorf("--format %q: %w", format, results.ErrUnknownFormat)
			}
			if err != nil {
				return err
			}
			o := results.ExportOptions{Site: site, Format: f, All: all}
			if pg, _ = postgresURL(pg, false); pg != "" {
				return exportPostgres(cmd, pg, since, o)
			}
			if since != "" {
				return fmt.Errorf("--since: needs --postgres (the stream keeps no history to filter)")
			}
			return exportStream(cmd, a, o)
		},
	}
	cmd.Flags().StringVar(&site, "site", "", "only this site's items")
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	cmd.Flags().BoolVar(&all, "all", false, "every record, not one merged item per (site, id)")
	postgresFlag(cmd, &pg, "read the durable store in PostgreSQL instead of the stream")
	cmd.Flags().StringVar(&since, "since", "", "with --postgres: items seen (with --all: observations) since D ago (24h, 7d) or a date (2026-01-02, RFC 3339)")
	return cmd
}

// exportStream exports the results stream; with a sink attached it says
// that the stream holds only what the sink has not stored yet, and that
// the rows are in PostgreSQL.
func exportStream(cmd *cobra.Command, a *app, o results.ExportOptions) error {
	conn, err := a.redis(cmd.Context())
	if err != nil {
		return err
	}
	defer conn.Close()
	n, err := results.Export(cmd.Context(), conn.Client, cmd.OutOrStdout(), o)
	if err != nil {
		return err
	}
	if n == 0 && o.Site != "" {
		if err := siteIn(o.Site, nil); err != nil { // else: a site whose items are not in the stream yet
			return fmt.Errorf("--site: %w", err)
		}
	}
	sink, err := results.SinkAttached(cmd.Context(), conn.Client)
	if err != nil {
		return err
	}
	if sink {
		fmt.Fprintf(cmd.ErrOrStderr(), "exported %d items from the stream, which holds only what the sink has not stored yet: "+
			"the rows are in PostgreSQL, export them with --postgres URL\n", n)
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "exported %d items\n", n)
	return nil
}

func exportPostgres(cmd *cobra.Command, pg, since string, o results.ExportOptions) error {
	from, err := parseSince(since, time.Now())
	if err != nil {
		return err
	}
	conn, err := pgsink.Connect(cmd.Context(), pg)
	if err != nil {
		return postgresErr(err)
	}
	defer conn.Close(context.WithoutCancel(cmd.Context()))
	if o.Site != "" {
		stored, err := pgsink.Sites(cmd.Context(), conn)
		if err != nil {
			return pgsink.SchemaHint(err)
		}
		if err := siteIn(o.Site, stored); err != nil {
			return fmt.Errorf("--site: %w", err)
		}
	}
	n, err := pgsink.Export(cmd.Context(), conn, cmd.OutOrStdout(), pgsink.ExportOptions{ExportOptions: o, Since: from})
	if err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "exported %d items\n", n)
	}
	return err
}

// parseSince reads --since: "" (everything), a duration back from now
// (90m, 24h, 7d), or a date (2006-01-02 or RFC 3339).
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration back from now (90m, 24h, 7d) or a date (2006-01-02, RFC 3339)", s)
}

// parseMinDrop reads --min-drop as alert add reads --drop-pct: "10%" or "10".
func parseMinDrop(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := pgsink.ParsePercent(s)
	if err != nil {
		return 0, fmt.Errorf("--min-drop %q: %w", s, err)
	}
	if v < 0 || v > 100 {
		return 0, fmt.Errorf("--min-drop %q: want a percentage from 0 to 100, e.g. 10%%", s)
	}
	return v, nil
}

func newResultsChangesCmd(a *app) *cobra.Command {
	var pg, since, minDrop string
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "changes --postgres URL [--since 24h] [--min-drop 10%] [--json]",
		Short: "List price changes recorded in PostgreSQL, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runResultsChanges(cmd, pg, since, minDrop, limit, asJSON)
		},
	}
	postgresFlag(cmd, &pg, "PostgreSQL URL of the sink's store")
	cmd.Flags().StringVar(&since, "since", "24h", "changes observed since D ago (24h, 7d) or a date")
	cmd.Flags().StringVar(&minDrop, "min-drop", "", "only price falls of at least this much, e.g. 10%")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many changes (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// runResultsChanges is `crawlq results changes`: the price changes
// PostgreSQL recorded since --since, of at least --min-drop.
func runResultsChanges(cmd *cobra.Command, pg, since, minDrop string, limit int, asJSON bool) error {
	url, err := postgresURL(pg, true)
	if err != nil {
		return err
	}
	from, err := parseSince(since, time.Now())
	if err != nil {
		return err
	}
	drop, err := parseMinDrop(minDrop)
	if err != nil {
		return err
	}
	conn, err := pgsink.Connect(cmd.Context(), url)
	if err != nil {
		return postgresErr(err)
	}
	defer conn.Close(context.WithoutCancel(cmd.Context()))
	cs, err := pgsink.Changes(cmd.Context(), conn, from, drop, limit)
	if err != nil {
		return err
	}
	if asJSON {
		return jsonLine(cmd.OutOrStdout(), cs)
	}
	return writeChanges(cmd.OutOrStdout(), cs)
}

func writeChanges(w io.Writer, cs []pgsink.Change) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tSITE\tID\tFROM\tTO\tCHANGE\tTITLE")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.At.Format(time.RFC3339), c.Site, c.ID, rub(c.From), rub(c.To),
			pgsink.FormatChange(c.ChangePct), c.Title)
	}
	if len(cs) == 0 {
		fmt.Fprintln(tw, "(no price changes)")
	}
	return tw.Flush()
}

// rub formats kopecks as roubles.
func rub(k int64) string { return fmt.Sprintf("%d.%02d", k/100, k%100) }

func newResultsTailCmd(a *app) *cobra.Command {
	var site string
	cmd := &cobra.Command{
		Use:   "tail [--site S]",
		Short: "Print new items as JSON lines as workers write them, until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			return results.Tail(cmd.Context(), conn.Client, os.Stdout, site)
		},
	}
	cmd.Flags().StringVar(&site, "site", "", "only this site's items")
	return cmd
}
