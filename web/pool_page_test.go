package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
	"crawlq/proxies"
)

// TestPoolPageBeforeAnyWorker: right after an import, with no worker ever
// run, the pool page and /api/pool list every imported proxy with its
// sites, and the configured sites have their rows.
func TestPoolPageBeforeAnyWorker(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBWeb)
	opt := asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb}
	b := proxies.NewRedisBroker(rdb, proxies.Config{Sites: map[string]proxies.SiteConfig{"wildberries": {}, "ozon": {}}})
	a, _ := proxies.ParseLine("http://u1:pw-one@127.0.0.2:8080")
	o, _ := proxies.ParseLine("http://u2:pw-two@127.0.0.3:8080")
	o.Sites = []string{"ozon"}
	if _, err := b.Import(context.Background(), []proxies.Proxy{a, o}, proxies.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, Config{Redis: opt, Broker: b})
	code, page := get(t, http.MethodGet, base+"/", "")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d %s", code, page)
	}
	for _, want := range []string{`id="pool-wildberries"`, `id="pool-ozon"`, "u1:***@127.0.0.2:8080", "u2:***@127.0.0.3:8080"} {
		if !strings.Contains(page, want) {
			t.Errorf("pool page lacks %q", want)
		}
	}
	if strings.Contains(page, "The pool is empty") {
		t.Error("pool page says the pool is empty after an import")
	}
	_, body := get(t, http.MethodGet, base+"/api/pool", "")
	var p PoolPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("/api/pool: %v\n%s", err, body)
	}
	got := map[string]bool{}
	for _, r := range p.Proxies {
		got[r.Proxy+" "+r.Allowed+" "+r.Site+" "+r.State] = true
	}
	for _, want := range []string{"http://u1:***@127.0.0.2:8080 * ozon ready", "http://u1:***@127.0.0.2:8080 * wildberries ready",
		"http://u2:***@127.0.0.3:8080 ozon ozon ready"} {
		if !got[want] {
			t.Errorf("/api/pool lacks row %q; has %v", want, got)
		}
	}
	if p.Total != 3 {
		t.Errorf("/api/pool total = %d, want 3", p.Total)
	}
}

// TestPoolPageWithoutJavaScript: the page never reloads itself, and its
// filter form and page links are plain GET URLs the server renders, so a
// browser without JavaScript filters, pages and, on reload, sees current
// data.
func TestPoolPageWithoutJavaScript(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	_, page := get(t, http.MethodGet, base+"/", "")
	if strings.Contains(page, `http-equiv="refresh"`) {
		t.Error("pool page still reloads itself with <meta refresh>")
	}
	if !strings.Contains(page, `<form class="filter" method="get"`) {
		t.Error("pool page has no GET filter form")
	}
	_, page = get(t, http.MethodGet, base+"/?state=quarantined&site=ozon", "")
	rows := strings.Count(page, `class="proxy-row state-`)
	if rows != 1 || strings.Count(page, `class="proxy-row state-quarantined"`) != 1 {
		t.Errorf("/?state=quarantined&site=ozon renders %d rows, want the one quarantined proxy:\n%s", rows, page)
	}
	if !strings.Contains(page, `<option selected>quarantined</option>`) {
		t.Error("the filter form does not keep the chosen state")
	}
}

// TestPoolPageShowsCleared: the pool table has a cleared column per site,
// rendered by the server and updated in place from /api/summary's
// "pool/SITE/cleared" values (seedPool marks one wildberries proxy).
func TestPoolPageShowsCleared(t *testing.T) {
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker})
	_, page := get(t, http.MethodGet, base+"/", "")
	for _, want := range []string{`<th title=`, `>cleared</th>`,
		`<td class="cleared" data-k="pool/wildberries/cleared">1</td>`, `<td class="cleared" data-k="pool/ozon/cleared">0</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("pool page lacks %q", want)
		}
	}
	_, body := get(t, http.MethodGet, base+"/api/summary", "")
	var sum Summary
	if err := json.Unmarshal([]byte(body), &sum); err != nil {
		t.Fatalf("/api/summary: %v\n%s", err, body)
	}
	got := map[string]string{}
	for _, site := range []string{"wildberries", "ozon", "avito"} {
		got[site] = sum.Values["pool/"+site+"/cleared"]
	}
	if d := cmp.Diff(map[string]string{"wildberries": "1", "ozon": "0", "avito": "0"}, got); d != "" {
		t.Errorf("/api/summary pool/SITE/cleared (-want +got):\n%s", d)
	}
	if n := sum.Status.Pool.Sites["wildberries"].Cleared; n != 1 {
		t.Errorf("/api/summary status.pool.sites.wildberries.cleared = %d, want 1", n)
	}
}
