package sessions_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/sessions"
)

// openResumed opens task on m, waiting out the proxy's cool-down.
func openResumed(t *testing.T, ctx context.Context, m *sessions.Manager, task string) *sessions.Session {
	t.Helper()
	for {
		s, err := m.Open(ctx, task, wb, proxies.Datacenter)
		var nr *proxies.NotReadyError
		if errors.As(err, &nr) {
			time.Sleep(nr.Wait) // the proxy cools down for the site's min interval
			continue
		}
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		return s
	}
}

// TestResumeOnAnotherServerKeepsTheBrowser: the session's whole profile
// is stored with it; a resume on another server sends the same headers
// and the same TLS and HTTP/2 fingerprint over HTTPS, even when that
// server's build would pick another profile for the task.
func TestResumeOnAnotherServerKeepsTheBrowser(t *testing.T) {
	w := newWorld(t, 2)
	ctx := context.Background()
	f := fetcher.New(fetcher.Config{Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: w.tb.CA.Pool()}})
	t.Cleanup(f.Close)
	const task = "job-browser"
	key := sessions.RecordKey(task)
	s, err := w.manager("server-1", 10*time.Second).Open(ctx, task, wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Profile()
	if step, err := s.Get(ctx, f, w.detect, "search", searchURL(w.tb.HTTPSSiteURL(wb), 1), 1); err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("page 1: %v %v", step.Verdict, err)
	}
	_ = s.Close(ctx, proxies.Neutral()) // the attempt ends; the record stays

	// Another build names the profile differently: the stored one wins.
	var rec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(w.rdb.Get(ctx, key).Val()), &rec); err != nil {
		t.Fatalf("stored record: %v", err)
	}
	var stored fetcher.Profile
	if err := json.Unmarshal(rec["browser"], &stored); err != nil || stored != first {
		t.Fatalf("stored browser %+v (%v), want %+v", stored, err, first)
	}
	rec["profile"], _ = json.Marshal("a seed that picks another profile")
	raw, _ := json.Marshal(rec)
	w.rdb.Set(ctx, key, raw, time.Minute)

	s = openResumed(t, ctx, w.manager("server-2", 10*time.Second), task)
	if d := cmp.Diff(first, s.Profile()); d != "" || !s.Resumed() {
		t.Fatalf("resumed=%v, profile (-first +resumed):\n%s", s.Resumed(), d)
	}
	if step, err := s.Get(ctx, f, w.detect, "search", searchURL(w.tb.HTTPSSiteURL(wb), 2), 2); err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("page 2: %v %v", step.Verdict, err)
	}
	_ = s.Finish(ctx, proxies.OK(0))
	es := siteEntries(w.tb, wb)
	if len(es) != 2 || es[0].JA4 == "" || es[1].JA4 != es[0].JA4 || es[1].H2 != es[0].H2 || es[1].IP != es[0].IP {
		t.Fatalf("site saw %+v: want two pages from one IP with one JA4 and HTTP/2 fingerprint", es)
	}
}
