package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/schedule"
)

// TestStatusWithoutPostgres: with --postgres unreachable, `status` shows
// everything else and one line for PostgreSQL (its password masked), and
// exits 0; --json carries the error in postgres_error.
func TestStatusWithoutPostgres(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pg := "postgres://crawlq:hunter2@127.0.0.1:" + strconv.Itoa(port) + "/crawlq?connect_timeout=5"
	out, err := run(t, "status", "--postgres", pg)
	var pgLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "postgres: ") {
			pgLines = append(pgLines, l)
		}
	}
	if err != nil || !strings.Contains(out, "QUEUE") || !strings.Contains(out, "SERVER") || len(pgLines) != 1 ||
		!strings.HasSuffix(pgLines[0], "(alerts not shown)") || !strings.Contains(pgLines[0], "crawlq:***@127.0.0.1") ||
		strings.Contains(out, "hunter2") {
		t.Fatalf("status with PostgreSQL down: %v\n%s", err, out)
	}
	out, err = run(t, "status", "--postgres", pg, "--json")
	var st struct {
		Queues        []any  `json:"queues"`
		PostgresError string `json:"postgres_error"`
	}
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Queues == nil || st.PostgresError == "" || strings.Contains(out, "hunter2") {
		t.Fatalf("status --json with PostgreSQL down: %v\n%s", err, out)
	}
	if _, err := run(t, "status", "--postgres", "mysql://x"); err == nil {
		t.Error("status --postgres mysql://x: exit 0, want the bad URL refused")
	}
}

// TestSchedulerAndSinkLiveness: with no scheduler running, `schedule
// list` and `status` say a schedule's ticks are not queued; a running
// `crawlq scheduler` and `crawlq sink` are listed by `status` while they
// run and leave the list when they stop, and the scheduler logs its stop.
func TestSchedulerAndSinkLiveness(t *testing.T) {
	testredis.Client(t, testredis.DBCmd)
	url := testredis.URL(t, testredis.DBCmd)
	mustRun(t, "schedule", "add", "watch", "--cron", "@every 1h", "--", "ozon", "search", "kettle")
	for _, args := range [][]string{{"schedule", "list"}, {"status"}} {
		out := mustRun(t, args...)
		if !strings.Contains(out, "(no scheduler)") || !strings.Contains(out, schedule.NoSchedulerText) {
			t.Errorf("%v with no scheduler running does not say so:\n%s", args, out)
		}
	}
	if out := mustRun(t, "status"); !strings.Contains(out, "(no scheduler running:") || !strings.Contains(out, "(no sink running:") {
		t.Errorf("status does not say no scheduler and no sink run:\n%s", out)
	}

	schedAddr, sinkAddr := freeAddr(t), freeAddr(t)
	scheduler := startLogged(t, "--redis", url, "scheduler", "--sync", "1s", "--metrics-addr", schedAddr)
	sink := startLogged(t, "--redis", url, "sink", "--postgres", testpg.DB(t), "--consumer", "sink-one", "--metrics-addr", sinkAddr)
	waitFor(t, 30*time.Second, "the scheduler and the sink listed", func() bool {
		st := statusOf(t)
		return len(st.Schedulers) == 1 && len(st.Sinks) == 1 && st.Sinks[0].ServerID == "sink-one" &&
			len(st.Schedules) == 1 && !st.Schedules[0].NoScheduler
	})
	// The listeners start beside the heartbeat: wait until they answer.
	waitFor(t, 30*time.Second, "/healthz and /readyz of the scheduler and the sink answering 200", func() bool {
		for _, probe := range []string{schedAddr + "/healthz", schedAddr + "/readyz", sinkAddr + "/healthz", sinkAddr + "/readyz"} {
			if answerStatus("http://"+probe) != http.StatusOK {
				return false
			}
		}
		return true
	})
	out := mustRun(t, "status")
	if !containsFields(out, "scheduler") || !containsFields(out, "sink", "sink-one") || strings.Contains(out, "no scheduler") {
		t.Errorf("status with a scheduler and a sink running:\n%s", out)
	}
	scheduler.stop(t)
	sink.stop(t)
	if !strings.Contains(scheduler.stderr(), "scheduler stopped") {
		t.Errorf("the scheduler did not log its stop:\n%s", scheduler.stderr())
	}
	st := statusOf(t)
	if len(st.Schedulers) != 0 || len(st.Sinks) != 0 || !st.Schedules[0].NoScheduler {
		t.Errorf("after both stopped: schedulers %+v, sinks %+v, schedule %+v", st.Schedulers, st.Sinks, st.Schedules[0])
	}
}

// livenessStatus is what TestSchedulerAndSinkLiveness reads of `status
// --json`.
type livenessStatus struct {
	Schedulers []struct {
		ServerID string `json:"server_id"`
	} `json:"schedulers"`
	Sinks []struct {
		ServerID string `json:"server_id"`
	} `json:"sinks"`
	Schedules []schedule.Status `json:"schedules"`
}

func statusOf(t *testing.T) livenessStatus {
	t.Helper()
	var st livenessStatus
	if out := mustRun(t, "status", "--json"); json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json:\n%s", out)
	}
	return st
}

// containsFields reports whether a line of out starts with fields.
func containsFields(out string, fields ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= len(fields) && strings.Join(f[:len(fields)], " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}

// loggedProc is a crawlq process whose stderr the test reads.
type loggedProc struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *loggedProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *loggedProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// stop sends SIGTERM and waits for the process to exit 0.
func (p *loggedProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("%v after SIGTERM: %v\n%s", p.cmd.Args, err, p.stderr())
	}
}

// startLogged starts crawlq with args, its stderr kept; killed after the
// test if still running.
func startLogged(t *testing.T, args ...string) *loggedProc {
	t.Helper()
	raw, _ := json.Marshal(args)
	p := &loggedProc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), mainEnv+"="+string(raw))
	p.cmd.Stderr = p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// freeAddr is a free loopback host:port.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// answerStatus is the status of GET url, 0 when it does not answer.
func answerStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
