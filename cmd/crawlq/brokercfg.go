package main

import (
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"crawlq/proxies"
	"crawlq/tasks"
)

// configFlag adds --config to a read-only command (web, status, proxies
// stats), so it reports the sites the configuration knows.
func configFlag(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVar(path, "config", "", "YAML config file (sites, broker mode); its sites are shown even before any worker leased on them")
}

// brokerConfig is the broker policy of the --config file ("" for the
// built-in sites), logging to log.
func brokerConfig(path string, log *zap.Logger) (proxies.Config, error) {
	loaded, err := tasks.LoadConfig(path)
	if err != nil {
		return proxies.Config{}, err
	}
	c := loaded.BrokerConfig()
	c.Logger = log
	return c, nil
}
