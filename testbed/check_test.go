package testbed

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	req := func(site, ip string, start, end int, v Verdict) Entry {
		return Entry{Site: site, IP: ip, Path: "/x", Start: at(start), End: at(end), Verdict: v}
	}
	gaps := map[string]time.Duration{"a": 100 * time.Millisecond, "b": 0}
	tests := []struct {
		name    string
		entries []Entry
		i1, i2  int
		bans    map[string]int
	}{
		{name: "polite sequence", entries: []Entry{
			req("a", "ip1", 0, 50, VerdictOK), req("a", "ip1", 100, 150, VerdictOK), req("a", "ip1", 250, 300, VerdictOK),
			req("a", "ip2", 10, 60, VerdictOK), req("b", "ip1", 20, 70, VerdictOK),
		}, bans: map[string]int{}},
		{name: "overlap in flight", entries: []Entry{
			req("a", "ip1", 0, 500, VerdictOK), req("a", "ip1", 200, 250, VerdictOK), req("a", "ip1", 400, 450, VerdictOK),
		}, i1: 2, bans: map[string]int{}},
		{name: "too close, not overlapping", entries: []Entry{
			req("a", "ip1", 0, 10, VerdictOK), req("a", "ip1", 60, 70, VerdictTooFast), req("a", "ip1", 300, 310, VerdictBanned),
		}, i2: 1, bans: map[string]int{"ip1": 1}},
		{name: "no min interval on site b", entries: []Entry{
			req("b", "ip1", 0, 10, VerdictOK), req("b", "ip1", 11, 20, VerdictOK),
		}, bans: map[string]int{}},
		{name: "exempt entries ignored", entries: []Entry{
			req("a", "ip1", 0, 10, VerdictExempt), req("a", "ip1", 5, 10, VerdictOK),
		}, bans: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.entries, gaps)
			if r.I1Violations != tt.i1 || r.I2Violations != tt.i2 {
				t.Errorf("I1=%d I2=%d, want %d %d; details %v", r.I1Violations, r.I2Violations, tt.i1, tt.i2, r.Details)
			}
			if len(r.Details) != tt.i1+tt.i2 {
				t.Errorf("details %v", r.Details)
			}
			if diff := cmp.Diff(tt.bans, r.BansPerIP); diff != "" {
				t.Errorf("bans (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogRecordsRequests checks what the log keeps of real requests.
func TestLogRecordsRequests(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteWildberries: {}}})
	url := tb.SiteURL(SiteWildberries) + WBSearchPath + "?query=tea"
	get(t, clientFrom(t, politeIP, false), url)
	get(t, clientFrom(t, politeIP, false), tb.SiteURL(SiteWildberries)+WhoamiPath)
	entries := tb.Log.Entries()
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	e := entries[0]
	if e.IP != politeIP || e.Site != SiteWildberries || e.Path != WBSearchPath+"?query=tea" ||
		e.Verdict != VerdictOK || e.Status != http.StatusOK || !e.Issued || e.Session == "" || e.End.Before(e.Start) {
		t.Errorf("entry %+v", e)
	}
	if v := entries[1].Verdict; v != VerdictExempt {
		t.Errorf("whoami verdict %s, want exempt", v)
	}
	if r := tb.Check(); !r.OK() || r.Requests != 1 {
		t.Errorf("report %+v", r)
	}
}
