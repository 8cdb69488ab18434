package schedule

import (
	"strings"
	"testing"
	"time"

	"crawlq/tasks"
)

// TestHTMLTable: the dashboard's table shows each schedule's next and last
// run, its last run's outcome, skipped ticks and paused, escaped.
func TestHTMLTable(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ss := []Status{{Name: "sneakers", Cron: "0 */4 * * *", Jobs: 2, Next: now.Add(90 * time.Minute),
		State:   State{RunTick: now.Add(-150 * time.Minute), Runs: 7, Skipped: 3},
		LastRun: &tasks.Counts{Total: 10, Completed: 8, Failed: 2}},
		{Name: "<b>", Cron: "@daily", Paused: true}}
	h, err := HTML(ss, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<td class="l">sneakers</td>`, `<td class="l">in 1h30m0s</td>`, `<td class="l">2h30m0s ago</td>`,
		`<td class="l">done: 8 completed, 2 failed</td>`, `<td>7</td><td>3</td><td class="l">false</td>`, "&lt;b&gt;", `<td class="l">true</td>`} {
		if !strings.Contains(string(h), want) {
			t.Errorf("table lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(string(h), "no scheduler") {
		t.Errorf("says no scheduler runs where NoScheduler is false:\n%s", h)
	}
	ss[0].NoScheduler = true
	h, _ = HTML(ss, now)
	for _, want := range []string{`<td class="l">in 1h30m0s (no scheduler)</td>`, NoSchedulerText} {
		if !strings.Contains(string(h), want) {
			t.Errorf("table of a schedule with no scheduler lacks %q:\n%s", want, h)
		}
	}
}
