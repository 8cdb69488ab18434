package tasks_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"crawlq/results"
	"crawlq/results/item"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestOzonListingThroughPageAPI: a worker crawling an Ozon search on the
// farm gets every tile of every page (the HTML page shows only
// OzonHTMLTiles of them), asking the page API and following each page's
// nextPage with its paginator token; the testbed refused nothing and saw
// no I1/I2 violation.
func TestOzonListingThroughPageAPI(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 3})
	size := testbed.PageSizes[testbed.SiteOzon]
	q := pickQuery(t, tb.Catalog, testbed.SiteOzon, 2*size+1, 3*size, size+1, 2*size)
	runWorker(t, tb, reg)
	task, err := tasks.NewTask(reg, tasks.Job{Site: testbed.SiteOzon, Kind: "search", Request: site.Request{Query: q}, Pages: 5})
	if err != nil {
		t.Fatal(err)
	}
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	waitTask(t, insp, info.Queue, info.ID, asynq.TaskStateCompleted)

	var sb strings.Builder
	if _, err := results.Export(context.Background(), rdb, &sb, results.ExportOptions{Site: testbed.SiteOzon, Format: results.JSONL}); err != nil {
		t.Fatal(err)
	}
	got := map[string]item.Item{}
	for _, line := range strings.Split(strings.TrimSpace(sb.String()), "\n") {
		var it item.Item
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatal(err)
		}
		got[it.ID] = it
	}
	want := tb.Catalog.Matches(testbed.SiteOzon, q)
	for _, p := range want {
		it := got[p.ID]
		if it.Title != p.Title || it.Price != p.Price || it.Rating != p.Rating || it.Reviews != p.Reviews {
			t.Errorf("item %s: got %q %d %.1f %d; catalog %q %d %.1f %d", p.ID, it.Title, it.Price, it.Rating, it.Reviews,
				p.Title, p.Price, p.Rating, p.Reviews)
		}
	}
	if len(got) != len(want) {
		t.Errorf("exported %d items; the query has %d matches on %d pages", len(got), len(want), tb.Catalog.Pages(testbed.SiteOzon, q))
	}
	checkPagedByToken(t, tb, tb.Catalog.Pages(testbed.SiteOzon, q))
}

// checkPagedByToken: the site saw pages pages of the page API, each after
// the first asked with a paginator token, and refused nothing.
func checkPagedByToken(t *testing.T, tb *testbed.Testbed, pages int) {
	t.Helper()
	var api, tokens int
	for _, e := range tb.Log.Entries() {
		if e.Site != testbed.SiteOzon || !strings.HasPrefix(e.Path, testbed.OzonAPIPath) || e.Status != 200 {
			continue
		}
		api++
		u, _ := url.Parse(e.Path)
		inner, _ := url.Parse(u.Query().Get("url"))
		if inner.Query().Get("paginator_token") != "" {
			tokens++
		}
	}
	if api != pages || tokens != pages-1 {
		t.Errorf("page API answered %d requests, %d with a paginator token; want %d and %d", api, tokens, pages, pages-1)
	}
	if r := tb.Log.OzonRefused(); len(r) > 0 {
		t.Errorf("ozon refused %d requests: %+v", len(r), r)
	}
	if r := tb.Check(); !r.OK() {
		t.Errorf("testbed saw I1 %d, I2 %d violations: %v", r.I1Violations, r.I2Violations, r.Details)
	}
}
