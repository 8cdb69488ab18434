package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crawlq/internal/testredis"
	"crawlq/schedule"
)

// TestScheduleCLI: add (job syntax after --, enqueue's flags), list,
// pause, resume and remove, as a user runs them.
func TestScheduleCLI(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	run := func(args ...string) string {
		t.Helper()
		out, stderr, err := runMain(t, append([]string{"--redis", url, "schedule"}, args...)...)
		if err != nil {
			t.Fatalf("schedule %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	list := func() []schedule.Status {
		t.Helper()
		var ss []schedule.Status
		if err := json.Unmarshal([]byte(run("list", "--json")), &ss); err != nil {
			t.Fatal(err)
		}
		return ss
	}
	run("add", "sneakers", "--cron", "0 */4 * * *", "--", "wildberries", "search", "кроссовки", "--pages", "3", "--follow")
	s, err := schedule.NewStore(rdb).Get(context.Background(), "sneakers")
	if err != nil {
		t.Fatal(err)
	}
	j := s.Jobs[0]
	if s.Cron != "0 */4 * * *" || len(s.Jobs) != 1 || j.Query != "кроссовки" || j.Pages != 3 || !j.Follow || j.Schedule != "sneakers" {
		t.Fatalf("stored %+v, want the search with --pages 3 --follow", s)
	}
	if ss := list(); len(ss) != 1 || ss[0].Name != "sneakers" || ss[0].Paused || ss[0].Next.IsZero() {
		t.Fatalf("list: %+v", ss)
	}
	out, stderr, err := runMain(t, "--redis", url, "status", "--json")
	if err != nil {
		t.Fatalf("status --json: %v\n%s", err, stderr)
	}
	var st struct {
		Queues    []json.RawMessage `json:"queues"`
		Schedules []schedule.Status `json:"schedules"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Schedules) != 1 || st.Schedules[0].Name != "sneakers" || st.Schedules[0].Next.IsZero() {
		t.Fatalf("status --json schedules: %v %+v\n%s", err, st.Schedules, out)
	}
	if out, _, _ := runMain(t, "--redis", url, "status"); !strings.Contains(out, "SCHEDULE") || !strings.Contains(out, "0 */4 * * *") {
		t.Fatalf("status has no schedules table:\n%s", out)
	}
	run("pause", "sneakers")
	if ss := list(); !ss[0].Paused || !ss[0].Next.IsZero() {
		t.Fatalf("after pause: %+v", ss[0])
	}
	if out := run("list"); !strings.Contains(out, "sneakers") || !strings.Contains(out, "true") {
		t.Fatalf("list table after pause:\n%s", out)
	}
	run("resume", "sneakers")
	if ss := list(); ss[0].Paused {
		t.Fatalf("after resume: %+v", ss[0])
	}
	_, stderr, err = runMain(t, "--redis", url, "schedule", "add", "sneakers", "--cron", "@hourly", "ozon", "search", "x")
	if err == nil || !strings.Contains(stderr, "schedule exists: sneakers") {
		t.Fatalf("second add of a name: err %v, stderr %q", err, stderr)
	}
	run("remove", "sneakers")
	if ss := list(); len(ss) != 0 {
		t.Fatalf("after remove: %+v", ss)
	}
	_, stderr, err = runMain(t, "--redis", url, "schedule", "remove", "sneakers")
	if err == nil || !strings.Contains(stderr, "no such schedule: sneakers") {
		t.Fatalf("remove of a missing schedule: err %v, stderr %q", err, stderr)
	}
}

// TestScheduleAddRefusesBadInput: a bad cron spec, a bad name and a bad
// job line are errors naming what is wrong and where; nothing is stored.
func TestScheduleAddRefusesBadInput(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	file := filepath.Join(t.TempDir(), "jobs.jsonl")
	lines := `{"site":"ozon","kind":"search","query":"a"}` + "\n" + `{"site":"ozon","kind":"search","pages":500}` + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	zero := writeJobs(t, "zero.jsonl", `{"site":"ozon","kind":"search","query":"a"}`, `{"site":"ozon","kind":"search","query":"b","pages":0}`)
	typo := writeJobs(t, "typo.jsonl", `# jobs`, `{"site":"ozon","kind":"search","query":"a","pgaes":3}`)
	typoFetch := writeJobs(t, "fetch.jsonl", `{"kind":"fetch","fetch":{"url":"http://127.0.0.1:1/","iten":".card"}}`)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"cron out of range", []string{"add", "a", "--cron", "61 * * * *", "--", "ozon", "search", "x"}, `--cron: cron spec "61 * * * *": end of range (61) above maximum (59)`},
		{"cron garbage", []string{"add", "a", "--cron", "every hour", "ozon", "search", "x"}, `--cron: cron spec "every hour"`},
		{"no cron", []string{"add", "a", "ozon", "search", "x"}, `required flag(s) "cron" not set`},
		{"bad name", []string{"add", "a:b", "--cron", "@hourly", "ozon", "search", "x"}, `schedule name "a:b"`},
		{"bad job flag", []string{"add", "a", "--cron", "@hourly", "--", "ozon", "search", "x", "--pages", "0"}, "--pages 0: want at least 1"},
		{"bad file line", []string{"add", "a", "--cron", "@hourly", "-f", file}, file + ":2: pages: 500 is out of range 1..100"},
		{"unknown kind", []string{"add", "a", "--cron", "@hourly", "--", "ozon", "reviews", "кофе"}, `unknown kind "reviews" for ozon; kinds: category, product, search`},
		{"cron that never fires", []string{"add", "a", "--cron", "0 0 31 2 *", "--", "ozon", "search", "x"}, `--cron: cron spec "0 0 31 2 *": it never fires`},
		{"pages 0 in a file", []string{"add", "a", "--cron", "@hourly", "-f", zero}, zero + ":2: pages: 0 is out of range 1..100"},
		{"misspelt field", []string{"add", "a", "--cron", "@hourly", "-f", typo}, typo + `:2: pgaes: unknown field (did you mean pages?)`},
		{"misspelt fetch field", []string{"add", "a", "--cron", "@hourly", "-f", typoFetch}, typoFetch + `:1: iten: unknown field (did you mean item in fetch?)`},
		{"every under a second", []string{"add", "a", "--cron", "@every 500ms", "--", "ozon", "search", "x"}, "500ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := runMain(t, append([]string{"--redis", url, "schedule"}, c.args...)...)
			if err == nil || !strings.Contains(stderr, c.want) {
				t.Fatalf("err %v, stderr %q, want it to say %q", err, stderr, c.want)
			}
		})
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("%d keys written by refused adds", n)
	}
}

// writeJobs writes lines as a jobs file in a temporary directory and
// returns its path.
func writeJobs(t *testing.T, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
