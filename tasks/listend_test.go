package tasks_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/detect"
	"crawlq/internal/testredis"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestSmallPoolListingEndsAndConfirmationsNeverStarve (issue 25, point
// 9): four proxies, a worker of concurrency 16, Wildberries at a 400 ms
// min_interval; 3-page searches whose results end on page 2 (a short
// page) or page 1, and twice as many searches with no results as there
// are proxies, so that every proxy can be held by a job whose answer
// needs a second one. Every job completes. A listing ends at its last page: the page past it is never
// asked for, nobody confirms anything about it, and the job needs no
// second attempt. The no-result answers are each confirmed by a second
// IP (I7), at once or by the job's next attempt, and no confirmation
// waits for a second proxy longer than the site's min_interval times the
// pool's size (the waits the code records); no proxy is quarantined.
func TestSmallPoolListingEndsAndConfirmationsNeverStarve(t *testing.T) {
	const pool, minInterval = 4, 400 * time.Millisecond
	const wb = testbed.SiteWildberries
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: pool, Seed: 5})
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{wb: {MinInterval: minInterval.String()}}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var confirms []tasks.ConfirmStats
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "small-pool",
		Concurrency: 16, Sites: reg, ShutdownTimeout: time.Second,
		OnConfirm: func(s tasks.ConfirmStats) { mu.Lock(); confirms = append(confirms, s); mu.Unlock() }})
	size := testbed.PageSizes[wb]
	listings := append(findQueries(tb.Catalog, wb, size+1, 2*size-1, 6), findQueries(tb.Catalog, wb, 10, size-1, 4)...)
	empty := tb.Catalog.NoResultQueries(wb, 2*pool)
	if len(listings) != 10 || len(empty) != 2*pool {
		t.Fatalf("the catalog has %d of the 10 listing queries and %d of the %d with no results", len(listings), len(empty), 2*pool)
	}
	var jobs []tasks.Job
	for _, q := range listings {
		jobs = append(jobs, tasks.Job{Site: wb, Kind: "search", Request: site.Request{Query: q}, Pages: 3})
	}
	for _, q := range empty {
		jobs = append(jobs, tasks.Job{Site: wb, Kind: "search", Request: site.Request{Query: q}, Pages: 2})
	}
	c, infos := enqueueAndWait(t, rdb, reg, jobs)
	if c.Completed != len(jobs) || c.Failed != 0 || c.Empty != len(empty) {
		t.Errorf("counts %+v: want all %d completed, the %d with no results empty", c, len(jobs), len(empty))
	}
	checkListingsEnd(t, tb, infos[:len(listings)], listings)
	checkConfirms(t, confirms, len(empty), pool*minInterval)
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[wb]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans, %s (%s): no answer was a ban", p.ID, st.Banned, st.State, st.LastBan)
		}
	}
}

// checkListingsEnd: each listing job crawled exactly its query's pages
// in one attempt, with every match, no Suspect answer and no
// confirmation; the site was never asked for a page past the last.
func checkListingsEnd(t *testing.T, tb *testbed.Testbed, infos []*asynq.TaskInfo, queries []string) {
	t.Helper()
	const wb = testbed.SiteWildberries
	for i, info := range infos {
		q := queries[i]
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil {
			t.Fatalf("%s result: %v", q, err)
		}
		pages, matches := tb.Catalog.Pages(wb, q), len(tb.Catalog.Matches(wb, q))
		if s.Attempt != 1 || s.Pages != pages || s.Items != matches || s.Confirmations != 0 || s.Deferred != 0 || s.Verdicts["suspect"] != 0 {
			t.Errorf("%q (%d matches, %d pages): summary %+v; want %d pages and items in one attempt, nothing suspect or confirmed",
				q, matches, pages, s, pages)
		}
	}
	last := map[string]int{}
	for _, q := range queries {
		last[q] = tb.Catalog.Pages(wb, q)
	}
	for _, e := range tb.Log.Entries() {
		u, err := url.Parse(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		q, page := u.Query().Get("query"), u.Query().Get("page")
		if n, ok := last[q]; ok && atoi(page) > n {
			t.Errorf("%q: page %s asked for, past its last page %d", q, page, n)
		}
	}
}

// checkConfirms: every no-result job's answer was agreed on exactly once
// (at once, or by its next attempt's answer and the one kept for it),
// and no confirmation waited for a second proxy longer than bound.
func checkConfirms(t *testing.T, confirms []tasks.ConfirmStats, noResults int, bound time.Duration) {
	t.Helper()
	agreed, deferred, controls := 0, 0, 0
	for _, c := range confirms {
		controls += c.Controls
		if c.WitnessBans != 0 {
			t.Errorf("confirmation %+v: a witness's control came back empty, but no IP here is soft-banned", c)
		}
		if c.Waited > bound {
			t.Errorf("a confirmation waited %s for a second proxy, over min_interval × pool = %s", c.Waited, bound)
		}
		switch {
		case c.Deferred:
			deferred++
		case c.Decision == detect.Agreed:
			agreed++
		default:
			t.Errorf("confirmation %+v: want agreed or deferred (every Suspect answer here is a true no-result)", c)
		}
	}
	if agreed != noResults {
		t.Errorf("%d confirmations agreed (%d deferred), want one per no-result job, %d", agreed, deferred, noResults)
	}
	t.Logf("%d confirmations agreed, %d deferred, %d controls asked", agreed, deferred, controls)
}

// findQueries returns up to n one-word queries with lo..hi matches on a
// site.
func findQueries(c *testbed.Catalog, siteName string, lo, hi, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range c.Products(siteName) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if len(out) == n {
				return out
			}
			if len([]rune(w)) < 4 || seen[w] {
				continue
			}
			seen[w] = true
			if m := len(c.Matches(siteName, w)); m >= lo && m <= hi {
				out = append(out, w)
			}
		}
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
