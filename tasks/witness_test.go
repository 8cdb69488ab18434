package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/internal/testredis"
	"crawlq/lab/truth"
	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestConfirmationCountsOnlyAWitnessThatSawItems: an empty answer that a
// second proxy agrees with is a second opinion only when that proxy's
// last answer on the site had items (issue 36.8). Three farm proxies A,
// B and C on Wildberries, the test holding the others' leases so each
// answer comes from the proxy it names:
//
//  1. C answers a search with items; then A answers a query that matches
//     nothing and C, asked again, agrees: C's last answer had items, so
//     the job completes empty (one confirmation, none discounted).
//     The agreement vouches for both A and C: each is a witness again.
//  2. B answers a search with items (the site keeps one witness); then A
//     and C are soft-banned, and C's record is left as an empty answer
//     of it leaves it while that answer's own confirmation is undecided
//     (a soft ban starts with such an answer; the test writes C's
//     record as answeredEmpty does). A answers a search that has items
//     with the empty shape and C agrees: C is no witness and nothing
//     vouches for it within the wait, so the agreement is discounted,
//     the job retries, and it completes with the items (no soft ban
//     missed, by the testbed's truth). Before the rule, the job stored
//     "no results".
func TestConfirmationCountsOnlyAWitnessThatSawItems(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 3, Seed: 5})
	wb := testbed.SiteWildberries
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	held := holdEach(t, b, wb, 3)
	a, bb, c := farmIPs(t, tb)
	confirms := make(chan tasks.ConfirmStats, 16)
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "test-worker",
		Concurrency: 2, Sites: reg, ShutdownTimeout: time.Second, OnConfirm: func(s tasks.ConfirmStats) { confirms <- s }})
	qs := itemQueries(t, tb.Catalog, wb, 3)
	search := func(q string) tasks.Job { return tasks.Job{Site: wb, Kind: "search", Request: site.Request{Query: q}} }

	held.free(t, c) // C answers with items
	if cnt, _ := enqueueAndWait(t, rdb, reg, []tasks.Job{search(qs[0])}); cnt.Completed != 1 || cnt.Empty != 0 {
		t.Fatalf("C's search: counts %+v, want completed with items", cnt)
	}
	held.take(t, wb, c)

	held.free(t, a) // A answers a query that matches nothing; C, a witness, agrees
	go func() {
		waitLog(t, tb, func(e testbed.Entry) bool { return e.IP == a && e.Meant == testbed.MeantEmpty })
		held.free(t, c)
	}()
	cnt, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{search(tb.Catalog.NoResultQueries(wb, 1)[0])})
	if s := summary(t, infos[0].Result); cnt.Completed != 1 || !s.Empty || s.Confirmations != 1 || s.Discounted != 0 {
		t.Fatalf("no-result search confirmed by a witness whose last answer had items: counts %+v, summary %+v; want completed empty, one confirmation, none discounted", cnt, s)
	}
	if s := <-confirms; s.Decision != detect.Agreed || s.Discounted {
		t.Errorf("confirmation %+v: want agreed", s)
	}
	wkey := "crawlq:{jobs}:witness:" + wb
	for _, ip := range []string{a, c} {
		if err := rdb.ZScore(context.Background(), wkey, ip).Err(); err != nil {
			t.Errorf("%s after the counted agreement: %v; want it vouched for (a witness again)", ip, err)
		}
	}
	held.take(t, wb, a, c)

	held.free(t, bb) // B answers with items: the site keeps a witness
	if cnt, _ := enqueueAndWait(t, rdb, reg, []tasks.Job{search(qs[1])}); cnt.Completed != 1 || cnt.Empty != 0 {
		t.Fatalf("B's search: counts %+v, want completed with items", cnt)
	}
	held.take(t, wb, bb)

	tb.SoftBan(wb, a, 0)
	tb.SoftBan(wb, c, 0)
	ctx := context.Background() // C's ban began with an empty answer still undecided:
	if err := rdb.ZRem(ctx, wkey, c).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, "crawlq:{jobs}:unvouched:"+wb, redis.Z{Score: float64(time.Now().UnixMilli()), Member: c}).Err(); err != nil {
		t.Fatal(err)
	}
	held.free(t, a) // A, soft-banned, answers empty; C, soft-banned, agrees
	discounted := make(chan tasks.ConfirmStats, 1)
	go func() {
		waitLog(t, tb, func(e testbed.Entry) bool { return e.IP == a && e.Meant == testbed.MeantBanned })
		held.free(t, c)
		for s := range confirms {
			if s.Discounted {
				discounted <- s
				held.free(t, bb) // the retry may now have the items from B
				return
			}
		}
	}()
	cnt, infos = enqueueAndWait(t, rdb, reg, []tasks.Job{search(qs[2])})
	want := min(len(tb.Catalog.Matches(wb, qs[2])), testbed.PageSizes[wb])
	if s := summary(t, infos[0].Result); cnt.Completed != 1 || s.Items != want {
		t.Errorf("search answered empty by two soft-banned IPs: counts %+v, last attempt %+v; want completed with %d items", cnt, s, want)
	}
	select {
	case s := <-discounted:
		if s.Decision != detect.Undecided || s.Requests != 1 {
			t.Errorf("discounted confirmation %+v: want undecided, one request", s)
		}
	default:
		t.Error("no confirmation was discounted: C's agreement counted although its last answer had no items")
	}
	if r := truth.Score(tb.Log.Entries(), poolStats(t, rdb, reg)); r.MissedSoftBans != 0 || r.SoftBannedAnswers < 2 {
		t.Errorf("ban score %+v: want the soft-banned answers (at least 2) none missed", r)
	}
}

// heldLeases are the test's leases of a site's proxies, by IP.
type heldLeases struct {
	b      *proxies.RedisBroker
	leases map[string]*proxies.Lease
}

// holdEach leases n proxies of site for the test (every one of the farm).
func holdEach(t *testing.T, b *proxies.RedisBroker, siteName string, n int) *heldLeases {
	t.Helper()
	h := &heldLeases{b: b, leases: map[string]*proxies.Lease{}}
	for range n {
		h.lease(t, siteName)
	}
	return h
}

func (h *heldLeases) lease(t *testing.T, siteName string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := h.b.LeaseWait(ctx, proxies.LeaseRequest{Site: siteName, Class: proxies.Datacenter, Holder: "test", Task: "hold", TTL: 2 * time.Minute})
	if err != nil {
		t.Fatalf("hold a proxy of %s: %v", siteName, err)
	}
	h.leases[l.Proxy.Host] = l
	return l.Proxy.Host
}

// free releases the held proxy on ip, neutral.
func (h *heldLeases) free(t *testing.T, ip string) {
	l := h.leases[ip]
	if l == nil {
		t.Errorf("proxy on %s is not held", ip)
		return
	}
	delete(h.leases, ip)
	if err := h.b.Release(context.Background(), l, proxies.Neutral()); err != nil {
		t.Errorf("release %s: %v", ip, err)
	}
}

// take holds the proxies on ips again, once the jobs gave them back: they
// are the only ones free.
func (h *heldLeases) take(t *testing.T, siteName string, ips ...string) {
	t.Helper()
	for range ips {
		h.lease(t, siteName)
	}
	for _, ip := range ips {
		if h.leases[ip] == nil {
			t.Fatalf("held %v, want %v among them", h.leases, ips)
		}
	}
}

// farmIPs are the three farm proxies' IPs.
func farmIPs(t *testing.T, tb *testbed.Testbed) (string, string, string) {
	t.Helper()
	fp := tb.Farm.Proxies()
	if len(fp) != 3 {
		t.Fatalf("%d farm proxies, want 3", len(fp))
	}
	return fp[0].IP, fp[1].IP, fp[2].IP
}

// itemQueries are n queries of site matching 3..50 products.
func itemQueries(t *testing.T, c *testbed.Catalog, siteName string, n int) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Products(siteName) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if len(out) == n {
				return out
			}
			if len([]rune(w)) < 4 || seen[w] {
				continue
			}
			seen[w] = true
			if m := len(c.Matches(siteName, w)); m >= 3 && m <= 50 {
				out = append(out, w)
			}
		}
	}
	t.Fatalf("only %d queries of %s with 3..50 matches, want %d", len(out), siteName, n)
	return nil
}

func summary(t *testing.T, raw []byte) tasks.Summary {
	t.Helper()
	var s tasks.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}
