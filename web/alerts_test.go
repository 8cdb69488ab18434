package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"crawlq/results/pgsink"
)

// TestAlertsSectionShowsFailures: a failing webhook shows on the pool
// page with its masked error, escaped; no rules says how to add one.
func TestAlertsSectionShowsFailures(t *testing.T) {
	render := func(st pgsink.AlertState) string {
		t.Helper()
		h, err := AlertsSection(func(context.Context) (pgsink.AlertState, error) { return st, nil }).Render(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	if out := render(pgsink.AlertState{}); !strings.Contains(out, "crawlq alert add") {
		t.Fatalf("no rules: %s", out)
	}
	out := render(pgsink.AlertState{Rules: 2, Delivered: 7, Pending: 3, Failing: 3,
		LastError: `POST https://api.telegram.org/bot***/sendMessage: 502 <b>Bad Gateway</b>`, LastErrorAt: time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)})
	for _, want := range []string{"<td>7</td>", `class="bad">3</td>`, "bot***", "&lt;b&gt;Bad Gateway", "2026-12-05 01:02:03"} {
		if !strings.Contains(out, want) {
			t.Errorf("failing alerts: want %q in\n%s", want, out)
		}
	}
}
