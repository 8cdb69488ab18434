package keda

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/redisproc"
	"crawlq/proxies"
	"crawlq/tasks"
	_ "crawlq/tasks/ozon" // the sites register their queues
	"crawlq/tasks/site"
	_ "crawlq/tasks/wildberries"
)

// jobsIn is how many jobs the test leaves in each state of each queue.
var jobsIn = map[string]map[string]int{
	"wildberries": {"pending": 3, "active": 2, "retry": 2, "scheduled": 1, "archived": 1, "completed": 2},
	"ozon":        {"pending": 1, "active": 1, "retry": 1, "scheduled": 2, "archived": 2, "completed": 1},
}

// TestKedaRedisScalerCountsCrawlqJobs runs KEDA's Redis scaler Lua on the
// keys the chart's triggers name: each of pending, active, retry and
// scheduled gives that state's jobs (the sum the formula reads), while
// archived and completed jobs, which the chart does not read, sit in keys
// of their own; the pool key gives the proxies imported.
func TestKedaRedisScalerCountsCrawlqJobs(t *testing.T) {
	srv, err := redisproc.StartServer(t.TempDir(), "--save", "", "--appendonly", "no")
	if err != nil {
		t.Fatalf("redis: %v", err)
	}
	t.Cleanup(srv.Kill)
	rdb := srv.Client()
	t.Cleanup(func() { _ = rdb.Close() })
	placeJobs(t, asynq.RedisClientOpt{Addr: srv.Addr})
	script := kedaScript(t)
	ctx := context.Background()
	for queue, states := range jobsIn {
		for state, n := range states {
			key := "asynq:{" + queue + "}:" + state
			got, err := script.Run(ctx, rdb, []string{key}).Int()
			if err != nil || got != n {
				t.Errorf("KEDA's count of %s = %d (%v), want %d", key, got, err, n)
			}
		}
	}
	if n := importProxies(t, rdb); scriptCount(t, script, rdb, "crawlq:{pool}:classes") != n {
		t.Errorf("KEDA's count of crawlq:{pool}:classes, want the %d proxies imported", n)
	}
}

// kedaScript is KEDA's Lua, as copied in testdata.
func kedaScript(t *testing.T) *redis.Script {
	t.Helper()
	b, err := os.ReadFile("testdata/redis_scaler.lua")
	if err != nil {
		t.Fatal(err)
	}
	return redis.NewScript(string(b))
}

func scriptCount(t *testing.T, s *redis.Script, rdb *redis.Client, key string) int {
	t.Helper()
	n, err := s.Run(context.Background(), rdb, []string{key}).Int()
	if err != nil {
		t.Fatalf("KEDA's Lua on %s: %v", key, err)
	}
	return n
}

// importProxies imports a pool through the broker and returns its size.
func importProxies(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	var ps []proxies.Proxy
	for i := 1; i <= 7; i++ {
		p, err := proxies.ParseLine(fmt.Sprintf("http://10.0.0.%d:8080", i))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := proxies.NewRedisBroker(rdb, proxies.Config{}).Import(context.Background(), ps, proxies.ImportOptions{}); err != nil {
		t.Fatalf("import: %v", err)
	}
	return len(ps)
}

// placeJobs queues crawlq jobs and has a real Asynq server move them to
// the states of jobsIn: a handler that holds a job keeps it active, one
// that fails it puts it in retry (an hour off), one that fails it with
// SkipRetry archives it, one that succeeds completes it (crawlq's
// retention keeps it). Pending jobs are queued once the server stopped
// taking jobs; scheduled ones are due in an hour.
func placeJobs(t *testing.T, opt asynq.RedisClientOpt) {
	t.Helper()
	cl := asynq.NewClient(opt)
	defer cl.Close()
	enqueueStates(t, cl, "active", "retry", "archived", "completed")
	enqueueStates(t, cl, "scheduled")
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: 20, Queues: map[string]int{"wildberries": 1, "ozon": 1},
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour },
		LogLevel:       asynq.FatalLevel, ShutdownTimeout: 10 * time.Millisecond})
	if err := srv.Start(asynq.HandlerFunc(byState)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown) // cancels the held jobs' contexts
	waitStates(t, opt, "active", "retry", "archived", "completed")
	srv.Stop() // takes no more jobs; the held ones stay active
	enqueueStates(t, cl, "pending")
}

// enqueueStates queues the jobs jobsIn wants in each of states, each a
// crawlq search job whose query names the state it is to end in.
func enqueueStates(t *testing.T, cl *asynq.Client, states ...string) {
	t.Helper()
	for queue, want := range jobsIn {
		for _, state := range states {
			for i := range want[state] {
				j := tasks.Job{Site: queue, Kind: "search", Request: site.Request{Query: fmt.Sprintf("%s %d", state, i)}}
				task, err := tasks.NewTask(site.Default(), j)
				if err != nil {
					t.Fatal(err)
				}
				var opts []asynq.Option
				if state == "scheduled" {
					opts = append(opts, asynq.ProcessIn(time.Hour))
				}
				if _, err := cl.Enqueue(task, opts...); err != nil {
					t.Fatalf("enqueue %s %s: %v", queue, state, err)
				}
			}
		}
	}
}

// byState ends a job in the state its query names.
func byState(ctx context.Context, task *asynq.Task) error {
	var j tasks.Job
	if err := json.Unmarshal(task.Payload(), &j); err != nil {
		return err
	}
	switch state, _, _ := strings.Cut(j.Query, " "); state {
	case "active":
		<-ctx.Done()
		return ctx.Err()
	case "retry":
		return fmt.Errorf("failed on purpose: retry in an hour")
	case "archived":
		return fmt.Errorf("failed on purpose: %w", asynq.SkipRetry)
	}
	return nil
}

// waitStates waits until every queue holds jobsIn's counts of states.
func waitStates(t *testing.T, opt asynq.RedisClientOpt, states ...string) {
	t.Helper()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var missing []string
		for queue, want := range jobsIn {
			info, err := insp.GetQueueInfo(queue)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{"active": info.Active, "retry": info.Retry, "archived": info.Archived, "completed": info.Completed}
			for _, s := range states {
				if got[s] != want[s] {
					missing = append(missing, fmt.Sprintf("%s %s %d of %d", queue, s, got[s], want[s]))
				}
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs not in their states after 60 s: %v", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
