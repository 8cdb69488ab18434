package tasks_test

import (
	"encoding/json"
	"testing"

	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestFetchBrowserHandsTheParserTheRenderedPage: a page job on a site
// whose fetch policy is browser (Ozon's, here), for a page (on the
// testbed's CDN host) whose items its script draws
// (the server sends an empty shell), is parsed from the page after its
// scripts ran: the browser waits for the job's expected selector, and
// every item comes back.
func TestFetchBrowserHandsTheParserTheRenderedPage(t *testing.T) {
	rdb, tb, _ := crawlWorld(t, testbed.Config{Proxies: 1, Seed: 5, Farm: testbed.FarmConfig{Auth: true}})
	reg := site.Default().Clone()
	base := tb.CDN.URL(false)
	cfg := site.Config{Sites: map[string]site.SiteConfig{testbed.SiteOzon: {BaseURL: tb.Sites()[testbed.SiteOzon], Class: "datacenter", Fetch: site.FetchBrowser}}}
	if err := reg.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	serveWithBrowser(t, reg, 1)
	job := tasks.Job{Site: testbed.SiteOzon, Kind: tasks.KindFetch, Fetch: &tasks.PageSpec{URL: base + testbed.RenderPath,
		Expect: []string{"div.product-card"}, Item: "div.product-card", Fields: map[string]string{"title": ":root"}}}
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{job})
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	if c.Completed != 1 || s.Items != len(testbed.RenderItems) || s.Verdicts["ok"] != 1 {
		t.Fatalf("counts %+v, summary %+v: want the job completed with the %d items the page's script drew", c, s, len(testbed.RenderItems))
	}
	t.Logf("summary %+v; cdn log %d requests", s, tb.CDN.Log.Len())
}
