package web

import (
	"context"
	"html/template"
	"regexp"
	"strings"
	"testing"
	"time"

	"crawlq/results/pgsink"
	"crawlq/schedule"
	"crawlq/tasks"
)

// cellRE is a table cell of a section: its class and its text.
var cellRE = regexp.MustCompile(`<t([dh])( class="([^"]*)")?>(.*?)</t[dh]>`)

// numberRE is a cell that holds a figure: a count, a price, a percent.
var numberRE = regexp.MustCompile(`^[−+-]?[0-9][0-9 .,]*%?$`)

// TestSectionsAlignTextLeft: in the dashboard's section tables (latest
// changes, schedules, alerts and their rules) text is left-aligned
// (class "l") and figures right-aligned (the default). (An ID is text,
// even one of digits; the test's has a letter so the rule can tell.)
func TestSectionsAlignTextLeft(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	changes, err := ChangesSection(func(context.Context) ([]PriceChange, error) {
		return []PriceChange{{At: at, Site: "ozon", ID: "b7", Title: "kettle", From: 100000, To: 80000, ChangePct: -20}}, nil
	}).Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := AlertsSection(func(context.Context) (pgsink.AlertState, error) {
		return pgsink.AlertState{Rules: 2, Delivered: 3, Pending: 1, Failing: 1, PerRule: []pgsink.RuleState{
			{Rule: "bad", Site: "ozon", Pending: 1, Failing: 1, LastError: "webhook http://x.test/: 502", LastErrorAt: at},
			{Rule: "good", Site: "avito", Delivered: 3}}}, nil
	}).Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scheds, err := schedule.HTML([]schedule.Status{{Name: "phones", Cron: "@hourly", Jobs: 2, Next: at.Add(time.Hour),
		State: schedule.State{RunTick: at.Add(-time.Hour), Runs: 4}, LastRun: &tasks.Counts{Total: 2, Completed: 2}}}, at)
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]template.HTML{"changes": changes, "alerts": alerts, "schedules": scheds} {
		cells := cellRE.FindAllStringSubmatch(string(h), -1)
		if len(cells) == 0 {
			t.Fatalf("%s: no cells in\n%s", name, h)
		}
		for _, c := range cells {
			text := strings.TrimSpace(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(c[4], ""))
			left := strings.Contains(" "+c[3]+" ", " l ")
			if c[1] == "d" && left == numberRE.MatchString(text) {
				t.Errorf("%s: cell %q left-aligned %v, want text left and figures right", name, c[0], left)
			}
		}
	}
	if !strings.Contains(string(alerts), `<td class="l">bad</td><td class="l">ozon</td><td class="l bad">failing</td>`) ||
		!strings.Contains(string(alerts), `<td class="l">good</td><td class="l">avito</td><td class="l">ok</td><td>3</td>`) ||
		!strings.Contains(string(alerts), "2026-03-01 10:00:00: webhook http://x.test/: 502") {
		t.Errorf("alerts section does not say which rule fails:\n%s", alerts)
	}
}
