package tasks_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/fetcher"
	"crawlq/fetcher/browser"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
	"crawlq/testbed"
)

// The browser tier is a Solver.
var _ tasks.Solver = (*browser.Browser)(nil)

// TestChallengeClearedThroughTheSameProxy: on every site in challenge
// mode, a session's first page is challenged (Wildberries' API: 498);
// the browser, through the session's own proxy, clears the challenge
// (on Wildberries' home page; Avito's proof of work is solved over HTTP
// in the session), and the following pages go over HTTP with its cookie: the site's log shows one IP for the challenge, the solve
// and the pages, no cookie misused, politeness kept, and no proxy
// punished.
func TestChallengeClearedThroughTheSameProxy(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 3, Seed: 5, Challenge: true, Farm: testbed.FarmConfig{Auth: true}})
	serveWithBrowser(t, reg, 3)
	var jobs []tasks.Job
	for _, name := range testbed.SiteNames {
		jobs = append(jobs, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: manyPages(t, tb.Catalog, name)}, Pages: 3})
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, e := range tb.Log.Entries() {
				t.Logf("%s %s %s %s %s %v", e.Start.Format("05.000"), e.Site, e.IP, e.Path, e.Verdict, e.Challenge)
			}
		}
	})
	c, infos := enqueueAndWait(t, rdb, reg, jobs)
	if c.Completed != len(jobs) {
		for _, e := range tb.Log.Entries() {
			t.Logf("%s %s %s %s %s %v", e.Start.Format("05.000"), e.Site, e.IP, e.Path, e.Verdict, e.Challenge)
		}
		t.Fatalf("counts %+v: want %d completed", c, len(jobs))
	}
	for _, info := range infos {
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil {
			t.Fatal(err)
		}
		visits, pows := 1, 0
		if s.Site == testbed.SiteAvito { // its proof of work is solved over HTTP
			visits, pows = 0, 1
		}
		if s.Challenges != visits || s.ChallengesSolved != visits || s.ProofsOfWork != pows || s.Pages != 3 ||
			s.Verdicts["challenge"] != 1 || s.Verdicts["ok"] != 3 {
			t.Errorf("%s summary %+v: want one challenge solved (%d browser visits, %d proofs of work), then 3 pages OK", s.Site, s, visits, pows)
		}
	}
	for _, name := range testbed.SiteNames {
		checkOneIdentity(t, tb, name)
	}
	if got := tb.Log.Challenges(); got.Solved != len(jobs) || got.Misused != 0 {
		t.Errorf("site challenges %+v: want %d solved, none misused", got, len(jobs))
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
	for _, p := range poolStats(t, rdb, reg).Proxies {
		for name, st := range p.Sites {
			if st.Banned != 0 {
				t.Errorf("proxy %s banned on %s (%s): a challenge is not a ban", p.ID, name, st.LastBan)
			}
		}
	}
}

// checkOneIdentity: a site's log is challenge, solve, then pages, all
// from one IP, the pages after the solve served.
func checkOneIdentity(t *testing.T, tb *testbed.Testbed, name string) {
	t.Helper()
	var ip string
	var seen []string
	solved := false
	for _, e := range tb.Log.Entries() {
		if e.Site != name {
			continue
		}
		if ip == "" {
			ip = e.IP
		}
		seen = append(seen, e.Path+" "+string(e.Verdict)+" "+e.Challenge)
		switch {
		case e.IP != ip:
			t.Errorf("%s: request %s from %s after %s: one session, one IP", name, e.Path, e.IP, ip)
		case e.Challenge == testbed.ChallengeSolved:
			solved = true
		case solved && (e.Verdict != testbed.VerdictOK || e.Challenge != ""):
			t.Errorf("%s: %s after the solve: %s %s, want served", name, e.Path, e.Verdict, e.Challenge)
		}
	}
	if !solved || len(seen) < 4 || !strings.HasSuffix(seen[0], string(testbed.VerdictChallenge)+" "+testbed.ChallengeServed) {
		t.Errorf("%s log %q: want the challenge, its solve, then the pages", name, seen)
	}
	t.Logf("%s from %s: %q", name, ip, seen)
}

// TestChallengeWithoutBrowserFailsTheAttempt: with no browser tier, a
// challenged page fails the attempt with a clear reason; the proxy is not
// quarantined.
func TestChallengeWithoutBrowserFailsTheAttempt(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true})
	runWorker(t, tb, reg)
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	task, err := tasks.NewTask(reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "search", Request: site.Request{Query: "чай"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	got := waitTask(t, insp, info.Queue, info.ID, asynq.TaskStateRetry)
	for _, want := range []string{"behind a JavaScript challenge (status 498)", "this worker has no browser", "js challenge"} {
		if !strings.Contains(got.LastErr, want) {
			t.Errorf("last error %q lacks %q", got.LastErr, want)
		}
	}
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[testbed.SiteWildberries]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans, state %s: a challenge is not a ban", p.ID, st.Banned, st.State)
		}
	}
}

// manyPages is a query of the site with more than 3 full pages.
func manyPages(t *testing.T, c *testbed.Catalog, name string) string {
	t.Helper()
	for _, p := range c.Products(name) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if c.Pages(name, w) > 3 {
				return w
			}
		}
	}
	t.Fatalf("%s: no query with more than 3 pages", name)
	return ""
}

// TestClearanceReusedByTheNextSession: the clearance a browser got for a
// proxy is kept; the next job's session on that proxy starts with it and
// meets no challenge (no browser visit), since it is bound to the IP and
// browser, not the session.
func TestClearanceReusedByTheNextSession(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 1, Seed: 5, Challenge: true})
	serveWithBrowser(t, reg, 1)
	var sums []tasks.Summary
	for range 2 {
		_, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: tb.Catalog.Products(testbed.SiteWildberries)[len(sums)].ID}}})
		var s tasks.Summary
		if err := json.Unmarshal(infos[0].Result, &s); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	if sums[0].ChallengesSolved != 1 || sums[1].Challenges != 0 || sums[1].Verdicts["challenge"] != 0 || sums[1].Items != 1 {
		t.Errorf("summaries %+v, %+v: want the first job's solve, the second reusing it", sums[0], sums[1])
	}
	if got := tb.Log.Challenges(); got.Served != 2 || got.Solved != 1 || got.Misused != 0 {
		t.Errorf("site challenges %+v: want the first job's 498 and home page challenge, one solve, no misuse", got)
	}
}

// TestFetchBrowserRendersEveryPage: a site whose fetch policy is browser
// (its pages need JavaScript) has every page fetched by the browser,
// through the session's own proxy, and parsed. The testbed's challenge
// shows it: a page is served only after the challenge's script ran, and
// every request the site saw was one the browser sent past the session's
// gate (no HTTP request at all), from one IP, the pages paced (I2).
func TestFetchBrowserRendersEveryPage(t *testing.T) {
	rdb, tb, _ := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true, Farm: testbed.FarmConfig{Auth: true}})
	reg := site.Default().Clone()
	cfg := site.Config{Sites: map[string]site.SiteConfig{}}
	for name, u := range tb.Sites() {
		cfg.Sites[name] = site.SiteConfig{BaseURL: u, Class: "datacenter"}
	}
	cfg.Sites[testbed.SiteAvito] = site.SiteConfig{BaseURL: tb.Sites()[testbed.SiteAvito], Class: "datacenter", Fetch: site.FetchBrowser}
	if err := reg.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	serveWithBrowser(t, reg, 1)
	query := manyPages(t, tb.Catalog, testbed.SiteAvito)
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteAvito, Kind: "search", Request: site.Request{Query: query}, Pages: 2}})
	if c.Completed != 1 {
		t.Fatalf("counts %+v: want the job completed", c)
	}
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	entries := tb.Log.Entries()
	if s.Pages != 2 || s.Verdicts["ok"] != 2 || s.Items == 0 || s.Challenges != 0 {
		t.Errorf("summary %+v: want 2 pages rendered OK and parsed into items, no challenge counted", s)
	}
	// past the gate, not all reach the site: Chromium drops a favicon
	// request of the proof of work's page when the page reloads
	if s.BrowserRequests < len(entries) {
		t.Errorf("the browser sent %d requests past the gate, the site saw %d: want every request the browser's", s.BrowserRequests, len(entries))
	}
	var pages []string
	for _, e := range entries {
		if e.IP != entries[0].IP || e.Site != testbed.SiteAvito {
			t.Errorf("request %s %s from %s; want every request to avito from %s", e.Site, e.Path, e.IP, entries[0].IP)
		}
		if e.Verdict == testbed.VerdictOK {
			pages = append(pages, e.Path)
		}
	}
	if got := tb.Log.Challenges(); got.Served != 1 || got.Solved != 1 || got.Misused != 0 || len(pages) != 2 {
		t.Errorf("site challenges %+v, pages served %q: want the first page challenged and solved by the script, both pages served", got, pages)
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
	t.Logf("summary %+v; site log %d requests", s, len(entries))
}

// TestCardNeedsNoChallenge: in challenge mode, with no browser, a
// Wildberries card job (the basket CDN's card.json, no token) completes
// through a farm proxy with the product's title and no challenge served,
// while a product job (the __internal card API) on the same testbed is
// answered 498.
func TestCardNeedsNoChallenge(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true, Farm: testbed.FarmConfig{Auth: true}})
	runWorker(t, tb, reg)
	p := tb.Catalog.Products(testbed.SiteWildberries)[7]
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteWildberries, Kind: "card", Request: site.Request{ID: p.ID}}})
	if c.Completed != 1 {
		t.Fatalf("counts %+v: want the card job completed (last error %q; site log %+v)", c, infos[0].LastErr, tb.Log.Entries())
	}
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	if s.Items != 1 || s.Pages != 1 || s.Challenges != 0 || s.Verdicts["challenge"] != 0 || s.Verdicts["ok"] != 1 {
		t.Errorf("summary %+v: want one page, one item, no challenge", s)
	}
	items, err := results.Read(context.Background(), rdb, testbed.SiteWildberries)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].ID != p.ID || items[0].Title != p.Title || items[0].Price != 0 {
		t.Errorf("items %+v: want product %s %q with no price", items, p.ID, p.Title)
	}
	nm, _ := strconv.ParseInt(p.ID, 10, 64)
	entries := tb.Log.Entries()
	if len(entries) != 1 || entries[0].Path != testbed.WBCardJSONPath(nm) || entries[0].Verdict != testbed.VerdictOK || entries[0].Challenge != "" {
		t.Errorf("site log %+v: want one card.json request served OK, unchallenged", entries)
	}
	if got := tb.Log.Challenges(); got.Served != 0 {
		t.Errorf("site challenges %+v: want none served", got)
	}

	// The same testbed does challenge the token-guarded API.
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	client := asynq.NewClient(asynqOpt(t))
	defer client.Close()
	task, err := tasks.NewTask(reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := client.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitTask(t, insp, info.Queue, info.ID, asynq.TaskStateRetry); !strings.Contains(got.LastErr, "status 498") {
		t.Errorf("product job's last error %q: want the 498 challenge", got.LastErr)
	}
}

// TestClearedProxyLeasedFirst: with several proxies free and the site's
// clearance wait set (challenge: {wait: 2s}), the jobs after the first
// are leased the proxy that holds the site's clearance (waiting for it to
// cool down rather than taking a ready one without it), so the challenge
// costs one browser visit for all of them; without that, each job would
// take the proxy that waited longest and be challenged anew.
func TestClearedProxyLeasedFirst(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 4, Seed: 5, Challenge: true})
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{
		testbed.SiteWildberries: {Challenge: &site.ChallengeConfig{Wait: "2s"}}}}); err != nil {
		t.Fatal(err)
	}
	serveWithBrowser(t, reg, 1)
	const jobs = 4
	visits := 0
	for i := range jobs {
		_, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: tb.Catalog.Products(testbed.SiteWildberries)[i].ID}}})
		var s tasks.Summary
		if err := json.Unmarshal(infos[0].Result, &s); err != nil {
			t.Fatal(err)
		}
		if s.Items != 1 {
			t.Errorf("job %d summary %+v: want its item", i, s)
		}
		visits += s.Challenges
	}
	ips := map[string]int{}
	for _, e := range tb.Log.Entries() {
		ips[e.IP]++
	}
	if got := tb.Log.Challenges(); visits != 1 || got.Solved != 1 || got.Misused != 0 || len(ips) != 1 {
		t.Errorf("%d browser visits, site challenges %+v, requests by IP %v: want one visit, one solve, every job through the cleared proxy", visits, got, ips)
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
}

// TestRefusedKeptClearanceIsDropped: a clearance kept for a proxy that
// the site no longer accepts (its cookie expired at the site) is dropped
// at the first challenge of a request that carried it, and the challenge
// cleared anew by a visit that starts without the refused cookie: the
// same cookie is not tried a second time, and the proxy holds the new
// clearance after. (A visit to Wildberries' home page that carried the
// refused token could end before the page's script had minted a new one:
// the home page is not the challenge itself, so the stale token looked
// like the clearance.)
func TestRefusedKeptClearanceIsDropped(t *testing.T) {
	var ahead atomic.Int64 // the sites' clock runs ahead of ours by this
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 1, Seed: 5, Challenge: true,
		Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	solver := &recordingSolver{Solver: testBrowser(t)}
	serveWithSolver(t, reg, 1, solver)
	products := tb.Catalog.Products(testbed.SiteWildberries)
	crawl := func(i int) tasks.Summary {
		t.Helper()
		c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: products[i].ID}}})
		var s tasks.Summary
		if err := json.Unmarshal(infos[0].Result, &s); err != nil {
			t.Fatal(err)
		}
		if c.Completed != 1 || s.Items != 1 {
			t.Fatalf("job %d: counts %+v, summary %+v: want its item", i, c, s)
		}
		return s
	}
	if s := crawl(0); s.ChallengesSolved != 1 {
		t.Fatalf("first job %+v: want one challenge cleared", s)
	}
	ahead.Store(int64(testbed.DefaultChallengeTTL + time.Minute)) // the site's cookie has expired; the kept clearance has not
	before := tb.Log.Challenges().Served
	s := crawl(1)
	if s.ClearancesRefused != 1 || s.ClearancesReused != 0 || s.ChallengesSolved != 1 {
		t.Errorf("second job %+v: want the kept clearance refused once, not reused, and the challenge cleared anew", s)
	}
	if solver.cookieSent(1, wildberries.ClearanceCookie) {
		t.Errorf("a visit after the refusal carried the refused %s", wildberries.ClearanceCookie)
	}
	if served := tb.Log.Challenges().Served - before; served != 2 {
		t.Errorf("the site served %d challenges in the second job; want 2 (the request with the refused cookie, the browser's visit)", served)
	}
	if s := crawl(2); s.Challenges != 0 || s.ClearancesRefused != 0 {
		t.Errorf("third job %+v: want the new clearance used, no challenge", s)
	}
}

// TestConfirmationClearsTheSecondProxysChallenge: a soft-banned answer is
// asked again from a second proxy that holds no clearance; the site
// challenges it, the browser clears that challenge through the second
// proxy, and its answer contradicts the first: the first proxy is
// quarantined for the soft ban and the job gets its item.
func TestConfirmationClearsTheSecondProxysChallenge(t *testing.T) {
	rules := testbed.DefaultRules()[testbed.SiteWildberries]
	rules.SoftBan = &testbed.SoftBan{Every: 1, Max: 1, Gap: time.Minute} // the first answer with items is a soft ban
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true,
		Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: rules}})
	serveWithBrowser(t, reg, 1)
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: tb.Catalog.Products(testbed.SiteWildberries)[0].ID}}})
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	if c.Completed != 1 || s.Items != 1 || s.SoftBans != 1 || s.Confirmations != 1 || s.Challenges != 2 || s.ChallengesSolved != 2 {
		t.Fatalf("counts %+v, summary %+v: want the item, one confirmation contradicting the soft ban, two challenges cleared (the job's and the second proxy's)", c, s)
	}
	ips := map[string]bool{}
	for _, e := range tb.Log.Entries() {
		if e.Challenge == testbed.ChallengeSolved {
			ips[e.IP] = true
		}
	}
	if got := tb.Log.Challenges(); len(ips) != 2 || got.Misused != 0 {
		t.Errorf("solves from %v, site challenges %+v: want one solve from each proxy, none misused", ips, got)
	}
	var banned int64
	for _, p := range poolStats(t, rdb, reg).Proxies {
		banned += p.Sites[testbed.SiteWildberries].Banned
	}
	if banned != 1 {
		t.Errorf("%d proxies banned on wildberries; want the soft-banned one", banned)
	}
}

// serveWithBrowser runs a worker of concurrency jobs at once over reg,
// with a browser tier.
func serveWithBrowser(t *testing.T, reg *site.Registry, concurrency int) {
	t.Helper()
	serveWithSolver(t, reg, concurrency, testBrowser(t))
}

// serveWithSolver runs a worker of concurrency jobs at once over reg,
// with solver as its browser tier.
func serveWithSolver(t *testing.T, reg *site.Registry, concurrency int, solver tasks.Solver) {
	t.Helper()
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "test-worker",
		Concurrency: concurrency, Sites: reg, ShutdownTimeout: time.Second, Browser: solver})
}

// testBrowser starts a browser tier, closed after the test.
func testBrowser(t *testing.T) *browser.Browser {
	t.Helper()
	b, err := browser.New(browser.Config{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("chromium is needed (.ci/run installs it): %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// recordingSolver is a browser tier that keeps the jobs it was given.
type recordingSolver struct {
	tasks.Solver
	mu   sync.Mutex
	jobs []fetcher.BrowserJob
}

func (s *recordingSolver) Solve(ctx context.Context, job fetcher.BrowserJob) (fetcher.BrowserResult, error) {
	s.mu.Lock()
	s.jobs = append(s.jobs, job)
	s.mu.Unlock()
	return s.Solver.Solve(ctx, job)
}

// cookieSent says some job after the first skip carried a cookie named name.
func (s *recordingSolver) cookieSent(skip int, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs[min(skip, len(s.jobs)):] {
		for _, c := range j.Cookies {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}
