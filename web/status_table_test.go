package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"crawlq/internal/heartbeat"
	"crawlq/proxies"
	"crawlq/results"
)

// TestStatusTableKeepsColumns: with exit-IP and modem lines under the
// pool, the pool's columns stay as wide as their figures (each header
// word above its numbers); the live schedulers and sinks are listed, or
// a line says none runs; a sink group without a live sink is a warning.
func TestStatusTableKeepsColumns(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st := &Status{At: at, Pool: PoolStatus{Total: 12,
		Sites: map[string]proxies.SiteStats{
			"avito": {Ready: 10, Leased: 2, Exits: &proxies.ExitStats{Held: 3, Quarantined: 1, Seen: 40}},
			"ozon":  {Ready: 12},
		},
		Modems: &proxies.ModemStats{Modems: 2, Rotating: 1, PerMinute: 0.5, PerModemHour: 1200}},
		Schedulers: []heartbeat.Record{{Role: heartbeat.RoleScheduler, ServerID: "h1-7", Host: "h1", PID: 7,
			Version: "(devel) abc", Started: at.Add(-5 * time.Minute)}},
		Sinks:   []heartbeat.Record{},
		Results: &results.Backlog{Sink: true, Length: 40, Unacked: 30}}
	var buf bytes.Buffer
	if err := st.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	header, row := lineWith(lines, "SITE "), lineWith(lines, "avito ")
	for _, col := range []string{"READY", "LEASED", "COOLING"} {
		i := strings.Index(header, col)
		if i < 0 || i+len(col) > len(row) || row[i-1] != ' ' || row[i] == ' ' {
			t.Errorf("column %s at %d of the header is not above the avito row's figure:\n%s\n%s", col, i, header, row)
		}
	}
	if i := strings.Index(header, "LEASED"); i > 20 {
		t.Errorf("LEASED at column %d: the exit or modem line widened READY:\n%s", i, out)
	}
	for _, want := range []string{"avito exit IPs: 3 held, 1 quarantined, 40 seen\n", "modems: 2, 1 rotating;",
		"(no sink running: results stay in the Redis stream)", "WARNING results: 40 entries in the stream, 30 not yet in PostgreSQL, and no sink is running"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !containsLine(out, "PROCESS", "ID", "HOST", "PID", "VERSION", "UP") || !containsLine(out, "scheduler", "h1-7", "h1", "7", "(devel)", "abc", "5m0s") {
		t.Errorf("no process table with the scheduler h1-7:\n%s", out)
	}
	if strings.Contains(out, "no scheduler running") {
		t.Errorf("says no scheduler runs with one live:\n%s", out)
	}
}

// lineWith is the first line that starts with prefix.
func lineWith(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestStatusTableOneProxy: a pool of one says "1 proxy", not "1 proxies".
func TestStatusTableOneProxy(t *testing.T) {
	for total, want := range map[int]string{1: "(pool: 1 proxy)", 2: "(pool: 2 proxies)"} {
		st := &Status{Pool: PoolStatus{Total: total, Sites: map[string]proxies.SiteStats{"ozon": {Ready: total}}}}
		var buf bytes.Buffer
		if err := st.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("pool of %d: table lacks %q:\n%s", total, want, buf.String())
		}
	}
}
