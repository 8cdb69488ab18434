package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/term"

	"crawlq/lab/demo"
	"crawlq/web"
)

type demoFlags struct {
	duration time.Duration
	json     bool
	listen   string
	proxies  int
	seed     int64
	noChal   bool
	chrome   string
	postgres string
	modems   int
}

func newDemoCmd(a *app) *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Crawl the built-in testbed with three in-process workers on an embedded Redis (zero setup)",
		Long: `demo runs a whole crawlq cluster in one process: an embedded Redis, the
simulated Wildberries, Ozon and Avito with anti-bot rules on, a loopback proxy
farm with dead and flaky proxies, three workers and the web dashboard. It
enqueues searches and products for every site, shows progress on stderr and
ends with a summary (with --json, the last stdout line is JSON). --redis is
not used: the demo always runs on its own embedded Redis.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, a, f) },
	}
	fl := cmd.Flags()
	fl.DurationVar(&f.duration, "duration", demo.DefaultDuration, "stop after this long even if jobs are left")
	fl.BoolVar(&f.json, "json", false, `print the summary as one JSON line {"jobs":…,"completed":…,…} on stdout`)
	fl.StringVar(&f.listen, "listen", web.DefaultListen, `dashboard address ("" or "off": no dashboard; a taken port is replaced by a free one)`)
	fl.IntVar(&f.proxies, "proxies", demo.DefaultProxies, "proxy farm size (2 of them dead, 2 flaky)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the catalog, job mix and flaky proxies")
	fl.BoolVar(&f.noChal, "no-challenge", false, "run the sites without their JavaScript challenge (it is on whenever a chromium is found)")
	fl.StringVar(&f.chrome, "chrome", "", "the Chromium binary of challenge mode (default: chromium or google-chrome on PATH)")
	fl.IntVar(&f.modems, "modems", demo.DefaultModems, "mobile modems beside the farm, with their change links (-1: none)")
	fl.StringVar(&f.postgres, "postgres", "", "also run a durable sink into this PostgreSQL and report the rows written (not read from $CRAWLQ_POSTGRES: the demo needs none)")
	return cmd
}

func runDemo(cmd *cobra.Command, a *app, f demoFlags) error {
	if f.duration <= 0 {
		return fmt.Errorf("--duration %s: want a positive duration", f.duration)
	}
	log, err := a.logger()
	if err != nil {
		return err
	}
	defer log.Sync()
	if !cmd.Flags().Changed("log-level") {
		log = log.WithOptions(zap.IncreaseLevel(zap.WarnLevel)) // keep the progress line readable
	}
	if f.listen == "off" {
		f.listen = ""
	}
	if err := demoListenOnLoopback(f.listen); err != nil {
		return err
	}
	// On a terminal, without --duration or --json, the dashboard keeps
	// serving after the summary until Ctrl-C.
	keep := !f.json && !cmd.Flags().Changed("duration") && onTerminal(os.Stdout)
	_, err = demo.Run(cmd.Context(), demo.Config{Duration: f.duration, Listen: f.listen, Proxies: f.proxies,
		Seed: f.seed, NoChallenge: f.noChal, Chrome: f.chrome, Postgres: f.postgres, Modems: f.modems, Progress: os.Stderr, Logger: log, KeepServing: keep,
		Done: func(sum *demo.Summary) error {
			if f.json {
				return sum.WriteJSON(os.Stdout)
			}
			return sum.WriteText(os.Stdout)
		}})
	return postgresErr(err)
}

// onTerminal reports whether f is a terminal (not a pipe, file or /dev/null).
func onTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// demoListenOnLoopback refuses a dashboard address beyond loopback: the
// demo's dashboard has no auth. An address that does not resolve is left
// to the listen, which names it.
func demoListenOnLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	if ok, err := web.IsLoopbackAddr(addr); err == nil && !ok {
		return fmt.Errorf("--listen %s: the demo's dashboard has no auth, so it listens on loopback only (for one on the network: crawlq web --auth USER:PASS)", addr)
	}
	return nil
}
