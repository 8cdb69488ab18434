package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"crawlq/lab/bench"
)

// newBenchSinkCmd is `crawlq bench sink`.
func newBenchSinkCmd(a *app) *cobra.Command {
	var o bench.SinkOptions
	var pg string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sink --postgres URL",
		Short: "Observations/s one sink process writes into PostgreSQL (a scratch database on that server)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url, err := postgresURL(pg, true)
			if err != nil {
				return err
			}
			conn, err := a.redis(cmd.Context())
			if err != nil {
				return err
			}
			defer conn.Close()
			res, err := bench.RunSink(cmd.Context(), conn.Client, url, o)
			if err != nil {
				return postgresErr(err)
			}
			if asJSON {
				return writeJSONLine(cmd, res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d observations of %d items, batches of %d, %d alert rules (%d alerts decided): %.1fs, %.0f rows/s (load %s)\n",
				res.Rows, res.Items, res.Batch, res.Alerts, res.Fired, res.Seconds, res.RowsPerS, res.Load)
			return nil
		},
	}
	postgresFlag(cmd, &pg, "PostgreSQL server to bench on (a scratch database is created and dropped)")
	cmd.Flags().IntVar(&o.Rows, "rows", 200000, "observations in the stream when the sink starts")
	cmd.Flags().IntVar(&o.Batch, "batch", 5000, "the sink's batch size")
	cmd.Flags().IntVar(&o.Items, "items", 0, "distinct items observed (default rows/4)")
	cmd.Flags().IntVar(&o.Alerts, "alerts", 0, "alert rules installed before the run (each watching 20 items for a 1% drop or a return to stock)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
