package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/internal/redisx"
	"crawlq/proxies"
	"crawlq/tasks"
)

// childEnv makes the test binary a stand-in for `crawlq worker`: the
// benchmark's RSS child, with the flags RunCrawl passes.
const childEnv = "CRAWLQ_BENCH_WORKER_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runWorkerChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// childCommand runs this test binary as the worker child.
func childCommand(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// runWorkerChild is what `crawlq worker` does with the flags RunCrawl
// passes, on the Redis of CRAWLQ_REDIS.
func runWorkerChild(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	cfg := fs.String("config", "", "")
	queues := fs.String("queues", "", "")
	conc := fs.Int("concurrency", 10, "")
	id := fs.String("server-id", "", "")
	shutdown := fs.Duration("shutdown-timeout", 10*time.Second, "")
	fs.String("log-level", "", "")
	if len(args) == 0 || args[0] != "worker" || fs.Parse(args[1:]) != nil {
		fmt.Fprintln(os.Stderr, "child: want worker flags, got", args)
		return 2
	}
	if err := serveChild(*cfg, *queues, *conc, *id, *shutdown); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func serveChild(cfg, queues string, conc int, id string, shutdown time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	loaded, err := tasks.LoadConfig(cfg)
	if err != nil {
		return err
	}
	conn, err := redisx.Open(ctx, os.Getenv("CRAWLQ_REDIS"))
	if err != nil {
		return err
	}
	defer conn.Close()
	queue, _, _ := cutQueue(queues)
	return tasks.NewWorker(tasks.WorkerConfig{
		Redis: conn.Asynq, RDB: conn.Client, Broker: proxies.NewRedisBroker(conn.Client, loaded.BrokerConfig()), BrokerOnRDB: true,
		ServerID: id, Concurrency: conc, Queues: map[string]int{queue: 1}, Sites: loaded.Sites,
		Rules: &loaded.Rules, ShutdownTimeout: shutdown, Fetcher: fetcher.Config{TLS: loaded.TLS},
	}).Run(ctx)
}

// cutQueue reads "name=weight".
func cutQueue(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
