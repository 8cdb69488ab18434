package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/schedule"
	"crawlq/tasks"
)

// run executes the crawlq CLI in-process with args against the test Redis.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"--redis", testredis.URL(t, testredis.DBCmd)}, args...))
	err := root.ExecuteContext(context.Background())
	checkPrinted(t, args, out.String(), err)
	return out.String(), err
}

// checkPrinted fails t if a run's output or error shows a planted secret.
func checkPrinted(t *testing.T, args []string, out string, err error) {
	t.Helper()
	where := "crawlq " + strings.Join(args, " ")
	masktest.Check(t, where, out)
	if err != nil {
		masktest.Check(t, where+" (error)", err.Error())
	}
}

func queued(t *testing.T) int {
	t.Helper()
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBCmd})
	defer insp.Close()
	qs, _ := insp.Queues()
	n := 0
	for _, q := range qs {
		if info, err := insp.GetQueueInfo(q); err == nil {
			n += info.Size
		}
	}
	return n
}

// TestEnqueueBadInputQueuesNothing: every bad enqueue exits with an error
// naming the problem, and nothing is queued.
func TestEnqueueBadInputQueuesNothing(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs.jsonl")
	content := `{"site":"wildberries","kind":"search","query":"кофе"}
# a comment
{"site":"ozon","kind":"product","id":"747122168"}
{"site":"avito","kind":"search","query":"iphone",
`
	if err := os.WriteFile(jobs, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	invalid := filepath.Join(dir, "invalid.jsonl")
	if err := os.WriteFile(invalid, []byte(`{"site":"ozon","kind":"search","query":"x"}`+"\n"+`{"site":"ozon","kind":"search","query":"x","class":"spaceship"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown site", args: []string{"enqueue", "ebay", "search", "iphone"}, want: `site: "ebay" is not a known site`},
		{name: "unknown kind", args: []string{"enqueue", "ozon", "reviews", "кофе"}, want: `unknown kind "reviews" for ozon; kinds: category, product, search`},
		{name: "empty query", args: []string{"enqueue", "wildberries", "search"}, want: "query"},
		{name: "pages 0", args: []string{"enqueue", "ozon", "search", "кофе", "--pages", "0"}, want: "--pages 0"},
		{name: "malformed jobs line", args: []string{"enqueue", "-f", jobs}, want: jobs + ":4: "},
		{name: "invalid job in file", args: []string{"enqueue", "-f", invalid}, want: invalid + ":2: class"},
		{name: "product without id", args: []string{"enqueue", "ozon", "product"}, want: "give one or more IDs or URLs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testredis.Client(t, testredis.DBCmd)
			_, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("crawlq %v: err %v, want one naming %q", tc.args, err, tc.want)
			}
			if n := queued(t); n != 0 {
				t.Errorf("%d tasks queued after a refused enqueue", n)
			}
		})
	}
}

// TestEnqueueQueuesOnceAndCountsDuplicates: a good enqueue queues the job
// on its site's queue; the same again is a counted duplicate.
func TestEnqueueQueuesOnceAndCountsDuplicates(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	args := []string{"enqueue", "wildberries", "search", "кроссовки", "--pages", "3", "--follow"}
	out, err := run(t, args...)
	if err != nil || !strings.Contains(out, "1 enqueued, 0 duplicates") {
		t.Fatalf("first enqueue: %v\n%s", err, out)
	}
	out, err = run(t, args...)
	if err != nil || !strings.Contains(out, "0 enqueued, 1 duplicates") {
		t.Fatalf("second enqueue: %v\n%s", err, out)
	}
	if n := queued(t); n != 1 {
		t.Errorf("%d tasks queued, want 1", n)
	}
}

// TestEnqueueWaitThroughAPipe: with stderr not a terminal, --wait prints
// plain lines (the first one at once, then one per 10 s), never the
// terminal's carriage-return frames.
func TestEnqueueWaitThroughAPipe(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	out, err := run(t, "enqueue", "wildberries", "search", "кофе", "--wait", "--wait-timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("no worker runs, so the wait must time out: err = %v\n%s", err, out)
	}
	if strings.ContainsAny(out, "\r\033") {
		t.Fatalf("output through a pipe has terminal control characters: %q", out)
	}
	if n := strings.Count(out, "0/1 done"); n != 1 {
		t.Fatalf("a 2 s wait printed %d status lines, want 1 (then one per 10 s):\n%s", n, out)
	}
}

// TestEnqueueAndScheduleBakeNoClass: `enqueue` and `schedule add` without
// --class queue and store no proxy class (the worker's configuration
// decides it when the job runs); with --class the job names it.
func TestEnqueueAndScheduleBakeNoClass(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBCmd})
	defer insp.Close()
	tests := []struct {
		name, class string
		want        proxies.Class
	}{
		{name: "no class", want: ""},
		{name: "named class", class: "mobile", want: proxies.Mobile},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			query := fmt.Sprintf("велосипед %d", i)
			args := []string{"avito", "search", query}
			if tc.class != "" {
				args = append(args, "--class", tc.class)
			}
			if out, err := run(t, append([]string{"enqueue"}, args...)...); err != nil {
				t.Fatalf("enqueue: %v\n%s", err, out)
			}
			name := fmt.Sprint("bikes", i)
			if out, err := run(t, append([]string{"schedule", "add", name, "--cron", "@hourly", "--"}, args...)...); err != nil {
				t.Fatalf("schedule add: %v\n%s", err, out)
			}
			s, err := schedule.NewStore(rdb).Get(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Jobs[0].Class != tc.want {
				t.Errorf("schedule stored class %q, want %q", s.Jobs[0].Class, tc.want)
			}
			found := 0
			for _, j := range pendingJobs(t, insp, "avito") {
				if j.Query == query {
					found++
					if j.Class != tc.want {
						t.Errorf("enqueue queued class %q, want %q", j.Class, tc.want)
					}
				}
			}
			if found != 1 {
				t.Errorf("%d queued jobs of the query %q, want 1", found, query)
			}
		})
	}
}

func pendingJobs(t *testing.T, insp *asynq.Inspector, queue string) []tasks.Job {
	t.Helper()
	infos, err := insp.ListPendingTasks(queue)
	if err != nil {
		t.Fatal(err)
	}
	var out []tasks.Job
	for _, info := range infos {
		j, err := tasks.DecodeJob(info.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

// TestEnqueueSaysWhatADuplicateIsAndRunsAgain: a duplicate says what the
// job is doing (queued, then completed); options that change the crawl
// make a new job; --again queues the same job once more; --json lists
// empty lists as [].
func TestEnqueueSaysWhatADuplicateIsAndRunsAgain(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	job := []string{"enqueue", "wildberries", "search", "кофе", "--pages", "2"}
	steps := []struct {
		name string
		args []string
		do   func(t *testing.T)
		want string
	}{
		{name: "first", args: job, want: "1 enqueued, 0 duplicates"},
		{name: "again while queued", args: job, want: ": already queued, not queued twice"},
		{name: "after it completed", args: job, do: completeAll, want: " ago; --again runs it again"},
		{name: "more pages is a new job", args: append(job[:len(job)-1:len(job)-1], "3"), want: "1 enqueued, 0 duplicates"},
		{name: "--again", args: append(job, "--again"), want: "enqueued wildberries:search again:"},
		{name: "--json duplicate only", args: append(job, "--json"), want: `{"enqueued":[],"duplicates":[{`},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.do != nil {
				s.do(t)
			}
			out, err := run(t, s.args...)
			if err != nil || !strings.Contains(out, s.want) {
				t.Fatalf("crawlq %v: err %v, want %q in:\n%s", s.args, err, s.want, out)
			}
		})
	}
	if !strings.Contains(mustRun(t, append(job, "--json")...), `"state":"completed","at":"`) {
		t.Error("--json does not give a duplicate's state and when")
	}
}

// completeAll runs every queued task of the wildberries queue to
// completion with an Asynq server whose handler does nothing.
func completeAll(t *testing.T) {
	t.Helper()
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBCmd}
	srv := asynq.NewServer(opt, asynq.Config{Queues: map[string]int{"wildberries": 1}, Concurrency: 1,
		LogLevel: asynq.ErrorLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		q, err := insp.GetQueueInfo("wildberries")
		if err == nil && q.Size == q.Completed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue not completed after 20 s: %+v %v", q, err)
		}
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("crawlq %v: %v\n%s", args, err, out)
	}
	return out
}
