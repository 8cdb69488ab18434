package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"crawlq/tasks/results"
)

func init() { register(newResultsCmd) }

func newResultsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "results", Short: "Export or follow crawled items"}
	cmd.AddCommand(newResultsExportCmd(a), newResultsTailCmd(a))
	return cmd
}

func newResultsExportCmd(a *app) *cobra.Command {
	var site, format string
	var all bool
	cmd := &cobra.Command{
		Use:   "export [--site S] [--format jsonl|csv] [--all]",
		Short: "Write the results stream to stdout, one item per (site, id) unless --all",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := results.ParseFormat(format)
			if err != nil {
				return err
			}
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			n, err := results.Export(cmd.Context(), conn.Client, os.Stdout, results.ExportOptions{Site: site, Format: f, All: all})
			if err == nil {
				fmt.Fprintf(os.Stderr, "exported %d items\n", n)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&site, "site", "", "only this site's items")
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	cmd.Flags().BoolVar(&all, "all", false, "every record, not one merged item per (site, id)")
	return cmd
}

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
