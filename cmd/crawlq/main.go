// Command crawlq is the one binary of crawlq: worker, enqueue, proxies,
// status, results, web, demo, bench and testbed. It only parses flags and
// environment, builds the parts and runs them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "crawlq:", err)
		os.Exit(1)
	}
}
