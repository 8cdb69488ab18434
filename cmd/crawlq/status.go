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
	asJSON, config := false, ""
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show queues per site, the proxy pool per site and live servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), a, cmd.OutOrStdout(), asJSON, config)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the snapshot as JSON (the numbers /metrics reports)")
	configFlag(cmd, &config)
	return cmd
}

func runStatus(ctx context.Context, a *app, out io.Writer, asJSON bool, config string) error {
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
	if !asJSON {
		return st.WriteTable(out)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}
