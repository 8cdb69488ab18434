package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"crawlq/internal/heartbeat"
	"crawlq/internal/redisx"
)

// app holds the global flags and what they build; subcommands get it.
type app struct {
	redisURL string
	logLevel string
	logJSON  bool
}

// newRootCmd is the whole command tree: the global flags and every
// command, each built by its constructor in its own file.
func newRootCmd() *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:           "crawlq",
		Short:         "Distributed job-queue scraping with a cluster-wide proxy broker",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints "crawlq version (devel) <commit>": the same
		// version a worker's heartbeat reports in `status`.
		Version: heartbeat.Version(),
		// go-redis logs to stderr on its own (dial failures); its lines go
		// through crawlq's logger at debug level, so a command prints one
		// clear error, not the library's noise before it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.routeRedisLogs() },
	}
	cobra.EnableTraverseRunHooks = true // subcommands' own pre-run hooks run after the root's
	a.addGlobalFlags(root.PersistentFlags())
	root.AddCommand(
		newAlertCmd(a),
		newBenchCmd(a),
		newDemoCmd(a),
		newDetectCmd(),
		newEnqueueCmd(a),
		newLimitsCmd(a),
		newParseCmd(),
		newPricesCmd(),
		newProxiesCmd(a),
		newResultsCmd(a),
		newScheduleCmd(a),
		newSchedulerCmd(a),
		newSinkCmd(a),
		newStatusCmd(a),
		newTestbedCmd(a),
		newWebCmd(a),
		newWorkerCmd(a),
	)
	return root
}

// routeRedisLogs sends go-redis's own log lines through crawlq's logger.
func (a *app) routeRedisLogs() error {
	log, err := a.logger()
	if err != nil {
		return err
	}
	redisx.RouteLogs(log)
	return nil
}

// addGlobalFlags binds the flags every command has to a.
func (a *app) addGlobalFlags(fl *pflag.FlagSet) {
	fl.StringVar(&a.redisURL, "redis", "",
		`Redis URL: redis://[:password@]host:port/db, redis-sentinel://[:password@]host:26379,host2:26379/MASTER/db, `+
			`redis-cluster://[:password@]host:7000,host2:7001 (rediss… for TLS) or "embedded"; env CRAWLQ_REDIS; default `+redisx.DefaultURL)
	fl.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.BoolVar(&a.logJSON, "log-json", false, "log as JSON lines instead of console text")
}

// redis opens --redis, else $CRAWLQ_REDIS, else the default; the caller
// closes it. The env value is read here, not as the flag's default, so
// --help never prints a password.
func (a *app) redis(ctx context.Context) (*redisx.Conn, error) {
	return openRedis(ctx, "--redis", a.redisTarget())
}

// openRedis opens raw, the value of flag: a bad URL's error names the
// flag, and that of a Redis that does not answer says what to do.
func openRedis(ctx context.Context, flag, raw string) (*redisx.Conn, error) {
	c, err := redisx.Open(ctx, raw)
	var ue *redisx.URLError
	switch {
	case errors.As(err, &ue):
		return nil, fmt.Errorf("%s: %w", flag, err)
	case errors.Is(err, redisx.ErrNoAnswer) && flag == "--redis":
		return nil, fmt.Errorf("%w (start Redis, set --redis/CRAWLQ_REDIS, or use --redis embedded)", err)
	case errors.Is(err, redisx.ErrNoAnswer):
		return nil, fmt.Errorf("%w (start Redis, or set %s)", err, flag)
	}
	return c, err
}

func (a *app) redisTarget() string {
	if a.redisURL != "" {
		return a.redisURL
	}
	if env := os.Getenv("CRAWLQ_REDIS"); env != "" {
		return env
	}
	return redisx.DefaultURL
}

// logger builds the zap logger from --log-level and --log-json; logs go to
// stderr so stdout stays clean for --json output.
func (a *app) logger() (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(a.logLevel)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	cfg := zap.NewDevelopmentConfig()
	if a.logJSON {
		cfg = zap.NewProductionConfig()
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.OutputPaths = []string{"stderr"}
	cfg.DisableStacktrace = true
	return cfg.Build()
}
