package tasks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/results"
	"crawlq/results/item"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// productPageWorld is a farm of n proxies whose Wildberries serves its
// product pages in the 2026 markup (testbed.WBProductPagePattern), with
// shell the ProductShellRule, and a worker without a browser whose
// Wildberries has fetch: browser: a product job asks the product page
// (over HTTP, the worker having no browser; the testbed serves the page
// as the browser shows it).
func productPageWorld(t *testing.T, n int, shell *testbed.ProductShellRule) (*redis.Client, *testbed.Testbed, *site.Registry) {
	t.Helper()
	const wb = testbed.SiteWildberries
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: n, Seed: 11,
		Sites: map[string]testbed.SiteRules{wb: withShell(testbed.DefaultRules()[wb], shell)}})
	cfg := site.Config{Sites: map[string]site.SiteConfig{wb: {BaseURL: tb.Sites()[wb], Class: "datacenter", Fetch: site.FetchBrowser}}}
	if err := reg.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	runWorker(t, tb, reg)
	return rdb, tb, reg
}

func withShell(r testbed.SiteRules, shell *testbed.ProductShellRule) testbed.SiteRules {
	r.ProductShell = shell
	return r
}

// productPageAsks is the requests for nm's product page in the site log.
func productPageAsks(tb *testbed.Testbed, nm string) []testbed.Entry {
	var out []testbed.Entry
	for _, e := range tb.Log.Entries() {
		if e.Site == testbed.SiteWildberries && e.Path == testbed.WBProductPagePath(nm) {
			out = append(out, e)
		}
	}
	return out
}

// wantItem is the item a testbed product's page holds.
func wantItem(tb *testbed.Testbed, p testbed.Product) item.Item {
	old := p.OldPrice
	if old <= p.Price {
		old = 0
	}
	return item.Item{Site: testbed.SiteWildberries, ID: p.ID, Title: p.Title, Price: p.Price, OldPrice: old, Currency: "RUB",
		Seller: p.Seller, Rating: p.Rating, Reviews: p.Reviews,
		URL: tb.Sites()[testbed.SiteWildberries] + testbed.WBProductPagePath(p.ID)}
}

// storedItems reads the results stream, without fetch times.
func storedItems(t *testing.T, rdb *redis.Client) []item.Item {
	t.Helper()
	items, err := results.Read(context.Background(), rdb, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		items[i].FetchedAt = time.Time{}
	}
	return items
}

// TestWBRenderedProductPageParsed (issue 36.6): under fetch: browser a
// Wildberries product job asks the product page, which the testbed
// serves in the 2026 markup of generated class names, and stores its one
// item (title, price, old price, seller, rating, its count) in one
// attempt, the page judged OK, nothing asked again.
func TestWBRenderedProductPageParsed(t *testing.T) {
	rdb, tb, reg := productPageWorld(t, 2, nil)
	p := tb.Catalog.Products(testbed.SiteWildberries)[3]
	info := enqueueUntil(t, reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}}, asynq.TaskStateCompleted)
	var s tasks.Summary
	if err := json.Unmarshal(info.Result, &s); err != nil {
		t.Fatal(err)
	}
	if s.Attempt != 1 || s.Items != 1 || s.Verdicts["ok"] != 1 || s.Confirmations != 0 {
		t.Errorf("summary %+v: want one attempt, one item, the page OK, no confirmation", s)
	}
	if d := cmp.Diff([]item.Item{wantItem(tb, p)}, storedItems(t, rdb)); d != "" {
		t.Errorf("stored item (-want +got):\n%s", d)
	}
	if asks := productPageAsks(tb, p.ID); len(asks) != 1 || asks[0].Status != http.StatusOK {
		t.Errorf("product page asked %+v, want once, answered 200", asks)
	}
}

// TestProductPageWithoutItemIsAnUnknownShape (issue 36.6): every IP gets
// the product page's frame without its product (200, the storefront's
// title, the product-page container the rules expect): judged OK by the
// rules, no item for the parser. It is asked again from a second IP, the
// two agree, and the job fails at once with the reason and the answer
// kept; nothing is stored, no proxy banned. When only the first IP gets
// the frame, the second IP's page has the item: it is stored and the
// first proxy quarantined (it was served something else).
func TestProductPageWithoutItemIsAnUnknownShape(t *testing.T) {
	t.Run("every IP", func(t *testing.T) {
		rdb, tb, reg := productPageWorld(t, 2, &testbed.ProductShellRule{IPs: 2})
		p := tb.Catalog.Products(testbed.SiteWildberries)[3]
		info := enqueueUntil(t, reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}}, asynq.TaskStateArchived)
		key := tasks.AnswerKey(info.ID)
		if !strings.Contains(info.LastErr, "answer not of the site's own shape") || !strings.Contains(info.LastErr, "kept at "+key) || info.Retried != 0 {
			t.Errorf("last error %q after %d retries: want the unknown shape, its answer kept, no retry", info.LastErr, info.Retried)
		}
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil || s.Confirmations != 1 || s.Verdicts["suspect"] != 2 || s.Answer != key || s.Items != 0 {
			t.Errorf("summary %+v (%v): want one confirmation of two suspect answers, the answer's key, no item", s, err)
		}
		a, err := tasks.LoadAnswer(context.Background(), rdb, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `class="product-page"`) ||
			!strings.HasSuffix(a.URL, testbed.WBProductPagePath(p.ID)) || !strings.Contains(a.Reason, "no product on the page") {
			t.Errorf("kept answer %s %d %q, body %.120q: want the frame's 200 page at the product URL, the parser's reason", a.URL, a.Status, a.Reason, a.Body)
		}
		asks := productPageAsks(tb, p.ID)
		if len(asks) != 2 || asks[0].IP == asks[1].IP {
			t.Errorf("product page asked %+v: want twice, from two IPs", asks)
		}
		assertNoResults(t, rdb)
		for _, px := range poolStats(t, rdb, reg).Proxies {
			if st := px.Sites[testbed.SiteWildberries]; st.Banned != 0 {
				t.Errorf("proxy %s banned %d times: an unknown shape both IPs got is no ban", px.ID, st.Banned)
			}
		}
	})
	t.Run("first IP only", func(t *testing.T) {
		rdb, tb, reg := productPageWorld(t, 2, &testbed.ProductShellRule{IPs: 1})
		p := tb.Catalog.Products(testbed.SiteWildberries)[3]
		info := enqueueUntil(t, reg, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}}, asynq.TaskStateCompleted)
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil || s.Confirmations != 1 || s.SoftBans != 1 || s.Items != 1 {
			t.Errorf("summary %+v (%v): want one confirmation, the first proxy soft-banned, one item", s, err)
		}
		got := storedItems(t, rdb)
		if len(got) != 1 || got[0].ID != p.ID || got[0].Title != p.Title || got[0].Price != p.Price {
			t.Errorf("stored %+v, want the product from the second IP's page", got)
		}
		asks := productPageAsks(tb, p.ID)
		if len(asks) != 2 || asks[0].IP == asks[1].IP {
			t.Fatalf("product page asked %+v: want twice, from two IPs", asks)
		}
		var banned int64
		for _, px := range poolStats(t, rdb, reg).Proxies {
			banned += px.Sites[testbed.SiteWildberries].Banned
		}
		if banned != 1 {
			t.Errorf("%d bans, want the first proxy's one", banned)
		}
	})
}
