package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestRedirectStubFollowedOnce (issue 36.5): the testbed's Avito answers
// a search at a moved location with the redirect stub of the real page
// of 2026-07 (status 200, loaderData.data {redirected, url}). The job
// asks the URL it names once, in the same session (the same proxy's IP,
// the session cookie the stub's answer set, paced by the site's
// min_interval), and stores that page's items in one attempt. A stub
// answering the URL a stub named fails the job at once, the reason
// named and the answer kept, with nothing stored; no proxy is banned.
func TestRedirectStubFollowedOnce(t *testing.T) {
	const av = testbed.SiteAvito
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 7})
	s, err := reg.Get(av)
	if err != nil {
		t.Fatal(err)
	}
	minInterval := s.MinInterval
	runWorker(t, tb, reg)
	q := pickQuery(t, tb.Catalog, av, 5, testbed.PageSizes[av], 1, testbed.PageSizes[av])
	info := runAvitoSearch(t, reg, testbed.AvitoMovedLocation, q, asynq.TaskStateCompleted)
	var sum tasks.Summary
	if err := json.Unmarshal(info.Result, &sum); err != nil {
		t.Fatal(err)
	}
	want := tb.Catalog.Search(av, q, 1)
	if sum.Attempt != 1 || sum.Redirects != 1 || sum.Items != len(want) || sum.Pages != 1 {
		t.Errorf("summary %+v: want one attempt, one redirect followed, page 1 with its %d items", sum, len(want))
	}
	items, err := results.Read(context.Background(), rdb, "")
	if err != nil || len(items) != len(want) || items[0].ID != want[0].ID {
		t.Errorf("stored %d items (%v), want the %d of the page the stub named", len(items), err, len(want))
	}
	checkHop(t, tb.Log.Entries(), "/"+testbed.AvitoMovedLocation+"?", "/"+testbed.AvitoCanonicalLocation+"?", minInterval)

	loop := runAvitoSearch(t, reg, testbed.AvitoLoopLocation, q, asynq.TaskStateArchived)
	if !strings.Contains(loop.LastErr, "answer not of the site's own shape") || !strings.Contains(loop.LastErr, "followed once only") ||
		!strings.Contains(loop.LastErr, `redirect stub to "/`+testbed.AvitoLoopLocation+`?`) || !strings.Contains(loop.LastErr, "kept at ") {
		t.Errorf("loop: last error %q; want the second stub named, followed once only, the answer kept", loop.LastErr)
	}
	if loop.Retried != 0 {
		t.Errorf("loop: %d retries, want none (a retry meets the same stubs)", loop.Retried)
	}
	if n, _ := rdb.XLen(context.Background(), results.StreamKey).Result(); n != int64(len(want)) {
		t.Errorf("results stream holds %d entries, want the first job's %d only", n, len(want))
	}
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[av]; st.Banned != 0 {
			t.Errorf("proxy %s banned %d times: a stub is no ban", p.ID, st.Banned)
		}
	}
}

// runAvitoSearch queues a one-page Avito search at location and waits
// for its task to reach state.
func runAvitoSearch(t *testing.T, reg *site.Registry, location, q string, state asynq.TaskState) *asynq.TaskInfo {
	t.Helper()
	return enqueueUntil(t, reg, tasks.Job{Site: testbed.SiteAvito, Kind: "search",
		Request: site.Request{Query: q, Location: location}, Pages: 1}, state)
}

// checkHop: the site was asked the stubbed URL, then the URL it named,
// once each, from the same IP with the session cookie the first answer
// set, at least minInterval apart.
func checkHop(t *testing.T, log []testbed.Entry, from, to string, minInterval time.Duration) {
	t.Helper()
	var asked []testbed.Entry
	for _, e := range log {
		if e.Site == testbed.SiteAvito && (strings.HasPrefix(e.Path, from) || strings.HasPrefix(e.Path, to)) {
			asked = append(asked, e)
		}
	}
	if len(asked) != 2 || !strings.HasPrefix(asked[0].Path, from) || !strings.HasPrefix(asked[1].Path, to) {
		t.Fatalf("asked %+v; want %s… then %s…, once each", asked, from, to)
	}
	a, b := asked[0], asked[1]
	if a.IP != b.IP || a.Session == "" || b.Session != a.Session || b.Issued {
		t.Errorf("stub from %s (session %q), its target from %s (session %q, issued %v): want one IP and session", a.IP, a.Session, b.IP, b.Session, b.Issued)
	}
	if gap := b.Start.Sub(a.Start); gap < minInterval {
		t.Errorf("the target was asked %s after the stub, under min_interval %s", gap, minInterval)
	}
}
