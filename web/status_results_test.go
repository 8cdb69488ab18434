package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"crawlq/results"
)

// TestStatusTableResults: the table names a worker paused for the sink's
// backlog and why, reports the backlog with a sink, and warns when a
// stream without a sink is at its MAXLEN bound (and only then).
func TestStatusTableResults(t *testing.T) {
	cases := []struct {
		name    string
		st      Status
		want    []string
		notWant string
	}{
		{name: "paused worker", st: Status{At: time.Now(),
			Servers: []ServerStatus{{ServerID: "w1", Paused: "results backlog 12 > 10: waiting for the sink"}},
			Results: &results.Backlog{Sink: true, Length: 12, Unacked: 12, MaxLen: 100}},
			want: []string{"PAUSED  w1: results backlog 12 > 10: waiting for the sink", "12 not yet in PostgreSQL"}, notWant: "WARNING"},
		{name: "no sink, at bound", st: Status{At: time.Now(), Results: &results.Backlog{Length: 100, MaxLen: 100}},
			want: []string{"WARNING results: the stream is at its bound (100 of 100 entries)"}, notWant: "waiting for the sink"},
		{name: "no sink, under bound", st: Status{At: time.Now(), Results: &results.Backlog{Length: 99, MaxLen: 100}},
			notWant: "results:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.st.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("table lacks %q:\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), c.notWant) {
				t.Errorf("table has %q:\n%s", c.notWant, b.String())
			}
		})
	}
}
