package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/hibiken/asynq"
	"github.com/spf13/cobra"

	"crawlq/proxies"
	"crawlq/web"
)

func init() { register(newStatusCmd) }

func newStatusCmd(a *app) *cobra.Command {
	asJSON := false
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show queues per site, the proxy pool per site and live servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), a, cmd.OutOrStdout(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the snapshot as JSON (the numbers /metrics reports)")
	return cmd
}

func runStatus(ctx context.Context, a *app, out io.Writer, asJSON bool) error {
	conn, err := a.redis(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	insp := asynq.NewInspector(conn.Asynq)
	defer insp.Close()
	st, err := web.Collect(ctx, insp, proxies.NewRedisBroker(conn.Client, proxies.Config{}))
	if err != nil {
		return err
	}
	if !asJSON {
		return st.WriteTable(out)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}
