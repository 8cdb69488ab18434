package web

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hibiken/asynq"

	"crawlq/proxies"
)

func TestCollectQueuesAndPool(t *testing.T) {
	c := newCluster(t)
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	st, err := Collect(context.Background(), insp, c.broker)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	want := []QueueStatus{
		{Queue: "avito", Size: 2, Pending: 1, Archived: 1},
		{Queue: "ozon", Size: 2, Pending: 2},
		{Queue: "wildberries", Size: 4, Pending: 3, Scheduled: 1},
	}
	if d := cmp.Diff(want, st.Queues); d != "" {
		t.Errorf("queues (-want +got):\n%s", d)
	}
	// seedPool's leases: see its doc.
	sc := func(ready, leased, cooling, quar int) proxies.StateCounts {
		return proxies.StateCounts{Ready: ready, Leased: leased, Cooling: cooling, Quarantined: quar}
	}
	site := func(c proxies.Class, n proxies.StateCounts) proxies.SiteStats {
		return proxies.SiteStats{Ready: n.Ready, Leased: n.Leased, Cooling: n.Cooling, Quarantined: n.Quarantined,
			ByClass: map[proxies.Class]proxies.StateCounts{c: n}}
	}
	wb := site(proxies.Datacenter, sc(1, 1, 1, 0))
	wb.Cleared = 1 // the leased proxy, in no more state sums
	wantPool := PoolStatus{Total: 4, Sites: map[string]proxies.SiteStats{
		"wildberries": wb,
		"ozon":        site(proxies.Datacenter, sc(2, 0, 0, 1)),
		"avito":       site(proxies.Residential, sc(0, 0, 1, 0)),
	}}
	if d := cmp.Diff(wantPool, st.Pool); d != "" {
		t.Errorf("pool (-want +got):\n%s", d)
	}
	if len(st.Servers) != 0 {
		t.Errorf("servers = %v, want none", st.Servers)
	}
}

func TestCollectLiveServers(t *testing.T) {
	c := newCluster(t)
	srv := asynq.NewServer(c.opt, asynq.Config{Concurrency: 2, Queues: map[string]int{"idle": 1},
		ShutdownTimeout: time.Second, LogLevel: asynq.ErrorLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })); err != nil {
		t.Fatalf("start asynq server: %v", err)
	}
	defer srv.Shutdown()
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	st := waitStatus(t, insp, c, func(s *Status) bool { return len(s.Servers) == 1 })
	got := st.Servers[0]
	want := ServerStatus{Concurrency: 2, Queues: map[string]int{"idle": 1}, Status: "active"}
	opts := cmpopts.IgnoreFields(ServerStatus{}, "ID", "Host", "PID", "Started")
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Errorf("server (-want +got):\n%s", d)
	}
	if got.ID == "" || got.Host == "" || got.PID == 0 || got.Started.IsZero() {
		t.Errorf("server identity missing: %+v", got)
	}
}

// waitStatus polls Collect until ok holds (Asynq writes server info from a
// background heartbeat), failing after 10 seconds.
func waitStatus(t *testing.T, insp *asynq.Inspector, c *cluster, ok func(*Status) bool) *Status {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := Collect(context.Background(), insp, c.broker)
		if err != nil {
			t.Fatalf("Collect: %v", err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within 10s; last status: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStatusWriteTable(t *testing.T) {
	c := newCluster(t)
	insp := asynq.NewInspector(c.opt)
	defer insp.Close()
	st, err := Collect(context.Background(), insp, c.broker)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := st.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"QUEUE", "wildberries", "ozon", "avito", "SITE", "QUARANTINED", "(no live servers)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !containsLine(out, "wildberries", "3", "0", "1") {
		t.Errorf("no wildberries queue row with pending 3, active 0, scheduled 1:\n%s", out)
	}
	if !containsLine(out, "SITE", "READY", "LEASED", "COOLING", "QUARANTINED", "CLEARED", "EXHAUSTED") {
		t.Errorf("no pool header with a CLEARED column after QUARANTINED:\n%s", out)
	}
	if !containsLine(out, "wildberries", "1", "1", "1", "0", "1", "-") || !containsLine(out, "ozon", "2", "0", "0", "1", "0", "-") {
		t.Errorf("no pool rows wildberries 1 1 1 0 cleared 1 and ozon 2 0 0 1 cleared 0:\n%s", out)
	}
}

// containsLine reports whether a line starts with the given fields.
func containsLine(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && cmp.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}
