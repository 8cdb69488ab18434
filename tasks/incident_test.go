package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/fetcher/browser"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// incidentWorld is a farm of n proxies whose Ozon, in challenge mode,
// answers the first IP to ask it with the real "Похоже, нет соединения"
// incident page (403): on every request, or once; and a worker with a
// browser whose visit gives up after 10 s (none without withBrowser).
func incidentWorld(t *testing.T, n int, once, withBrowser bool) (*redis.Client, *testbed.Testbed, *site.Registry) {
	t.Helper()
	oz := testbed.DefaultRules()[testbed.SiteOzon]
	oz.Incident = &testbed.IncidentRule{IPs: 1, Once: once}
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: n, Seed: 5, Challenge: true,
		Sites: map[string]testbed.SiteRules{testbed.SiteOzon: oz}})
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteOzon: {MinInterval: "600ms"}}}); err != nil {
		t.Fatal(err)
	}
	if !withBrowser {
		runWorker(t, tb, reg)
		return rdb, tb, reg
	}
	b, err := browser.New(browser.Config{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("chromium is needed (.ci/run installs it): %v", err)
	}
	t.Cleanup(b.Close)
	serveWithSolver(t, reg, 1, b)
	return rdb, tb, reg
}

// runOzonSearch runs a one-page Ozon search to completion and returns
// its summary.
func runOzonSearch(t *testing.T, rdb *redis.Client, tb *testbed.Testbed, reg *site.Registry) tasks.Summary {
	t.Helper()
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteOzon, Kind: "search",
		Request: site.Request{Query: manyPages(t, tb.Catalog, testbed.SiteOzon)}}})
	if c.Completed != 1 {
		t.Fatalf("counts %+v: want the job completed", c)
	}
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkIncidentBan: the proxy on the IP hit that met the incident page
// is banned once on Ozon for why, no other proxy at all (with hit "",
// none).
func checkIncidentBan(t *testing.T, rdb *redis.Client, reg *site.Registry, hit, why string) {
	t.Helper()
	for _, p := range poolStats(t, rdb, reg).Proxies {
		st := p.Sites[testbed.SiteOzon]
		isHit := strings.Contains(p.Masked, "//"+hit+":")
		switch {
		case isHit && (st.Banned != 1 || !strings.Contains(st.LastBan, why)):
			t.Errorf("incident proxy %s: %d bans (%q); want one, %s", p.ID, st.Banned, st.LastBan, why)
		case !isHit && st.Banned != 0:
			t.Errorf("proxy %s banned (%s): it never met the incident page", p.ID, st.LastBan)
		}
	}
}

// incidentIP is the IP whose first Ozon answer was the incident page,
// and every Ozon verdict it got.
func incidentIP(t *testing.T, tb *testbed.Testbed) (string, []testbed.Verdict) {
	t.Helper()
	for ip, vs := range ozonRequests(tb) {
		if vs[0] == testbed.VerdictIncident {
			return ip, vs
		}
	}
	t.Fatal("no IP met the incident page")
	return "", nil
}

// TestIncidentPageBlockedAfterOneVisit (issue 36.7): an IP that Ozon
// answers with the real incident page on every request is not called
// Blocked at once: the browser visits it once through the same IP, and
// only because that visit ends on the same page is the proxy quarantined
// (its ban naming it); the job then completes through the other proxy
// (its challenge cleared), and no other proxy is punished.
func TestIncidentPageBlockedAfterOneVisit(t *testing.T) {
	rdb, tb, reg := incidentWorld(t, 2, false, true)
	s := runOzonSearch(t, rdb, tb, reg)
	hit, got := incidentIP(t, tb)
	if len(got) < 2 || strings.Count(strings.Join(verdictNames(got), " "), "incident") != len(got) {
		t.Errorf("the incident IP %s was asked %v: want the page over HTTP, then the browser's visit, all answered with it", hit, got)
	}
	if s.Attempt != 2 || s.Pages != 1 {
		t.Errorf("summary %+v: want the job done by its second attempt, on the other proxy", s)
	}
	checkIncidentBan(t, rdb, reg, hit, "the browser did not pass")
}

// TestIncidentPageWithoutBrowserBlocked: a worker with no browser cannot
// try the incident page, so it is Blocked at once, as before issue 36.7:
// one request, the proxy banned naming why. (The job's next attempt, on
// the other proxy, meets the site's challenge, which without a browser
// fails the attempt unpunished.)
func TestIncidentPageWithoutBrowserBlocked(t *testing.T) {
	rdb, tb, reg := incidentWorld(t, 2, false, false)
	info := enqueueUntil(t, reg, tasks.Job{Site: testbed.SiteOzon, Kind: "search",
		Request: site.Request{Query: manyPages(t, tb.Catalog, testbed.SiteOzon)}}, asynq.TaskStateRetry)
	hit, got := incidentIP(t, tb)
	if len(got) != 1 {
		t.Errorf("the incident IP %s was asked %v: want one request, no visit", hit, got)
	}
	if !strings.Contains(info.LastErr, "blocked: challenge page, no browser to try it") {
		t.Errorf("last error %q: want the incident page blocked, no browser to try it", info.LastErr)
	}
	checkIncidentBan(t, rdb, reg, hit, "no browser to try it")
}

// TestIncidentPagePassedByTheVisit (issue 36.7): an IP that meets the
// real incident page once is no ban: the browser's visit through the
// same IP meets the site's challenge instead, clears it, and the job
// completes in its first attempt on that one proxy, nobody punished.
func TestIncidentPagePassedByTheVisit(t *testing.T) {
	rdb, tb, reg := incidentWorld(t, 1, true, true)
	s := runOzonSearch(t, rdb, tb, reg)
	if s.Attempt != 1 || s.Pages != 1 || s.ChallengesSolved != 1 || s.Verdicts["blocked"] != 0 {
		t.Errorf("summary %+v: want one attempt, the visit clearing, no blocked verdict", s)
	}
	if got := tb.Log.Challenges(); got.Solved != 1 {
		t.Errorf("site challenges %+v: want the visit's solve", got)
	}
	checkIncidentBan(t, rdb, reg, "", "")
}

// ozonRequests are the Ozon site's verdicts by client IP, in order.
func ozonRequests(tb *testbed.Testbed) map[string][]testbed.Verdict {
	out := map[string][]testbed.Verdict{}
	for _, e := range tb.Log.Entries() {
		if e.Site == testbed.SiteOzon {
			out[e.IP] = append(out[e.IP], e.Verdict)
		}
	}
	return out
}

func verdictNames(vs []testbed.Verdict) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
