package tasks_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
	"crawlq/testbed"
)

// deletedNM is on no basket host of the testbed (vol 19500, basket-53's
// range): a card deleted from the CDN.
const deletedNM = "1950012345"

// TestCardProbesBasketHosts: through real farm proxies, with the
// testbed's basket host names, card jobs of products past basket-17, on
// a moved vol and past the table's end complete with the right card;
// the card no host serves ends not found after MaxBasketProbes requests;
// the hosts found are kept in Redis. A second worker, the first stopped,
// asks the card of another product of each kept vol once, on its host,
// and reaches a host past the probe's reach from the table's end by
// starting at the newest host kept. The CDN publishes no upstream map
// (404): the probe goes by the table. Every request of a job went through
// its session's proxy, and the sites saw no I1/I2 violation.
func TestCardProbesBasketHosts(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 3, Seed: 11})
	useBasketHosts(t, tb, reg)
	byID := basketProducts(t)
	stopA := workerNamed(t, "basket-a", reg)
	first := []string{"497398643", "900012345", "1280469586", "1900012345", "2050012345", deletedNM}
	c, infos := enqueueAndWait(t, rdb, reg, cardJobs(first))
	if c.Completed != len(first)-1 || c.Failed != 1 || !strings.Contains(infos[len(first)-1].LastErr, "not found") {
		t.Fatalf("counts %+v, deleted card's error %q: want all but the deleted card completed, it not found",
			c, infos[len(first)-1].LastErr)
	}
	checkCards(t, rdb, byID, first[:len(first)-1])
	if got := cardRequests(tb.Log.Entries(), deletedNM); len(got) != wildberries.MaxBasketProbes || served(got) != 0 {
		t.Errorf("deleted card: %d requests, %d served; want %d, none served", len(got), served(got), wildberries.MaxBasketProbes)
	}
	kept := memory(t, rdb)
	if d := cmp.Diff(map[string]string{"9000": "40", "19000": "53", "20500": "55"}, withoutTop(kept)); d != "" {
		t.Errorf("kept hosts (-want +got):\n%s", d)
	}
	if kept["top"] != "19000:53" && kept["top"] != "20500:55" {
		t.Errorf("top %q: want a vol past the table and its host", kept["top"])
	}
	stopA()

	before := len(tb.Log.Entries())
	workerNamed(t, "basket-b", reg)
	second := []string{"900054321", "1900054321", "2050054321", "2200012345"}
	if c, _ := enqueueAndWait(t, rdb, reg, cardJobs(second)); c.Completed != len(second) {
		t.Fatalf("second worker: counts %+v, want every card completed", c)
	}
	checkCards(t, rdb, byID, second)
	after := tb.Log.Entries()[before:]
	for _, id := range second[:3] {
		if got := cardRequests(after, id); len(got) != 1 || served(got) != 1 {
			t.Errorf("card %s of a kept vol: %d requests (%+v); want one, served", id, len(got), got)
		}
	}
	if kept := memory(t, rdb); kept["22000"] != "57" || kept["top"] != "22000:57" {
		t.Errorf("kept %v: want vol 22000 on basket-57, the new top", kept)
	}
	checkBasketLog(t, tb, byID)
	for _, id := range append(first, second...) {
		t.Logf("card %s: %d card.json requests", id, len(cardRequests(tb.Log.Entries(), id)))
	}
}

// useBasketHosts points the card kind at the testbed's basket host names
// (over plain http) and paces Wildberries 1.5 times the testbed's limit.
func useBasketHosts(t *testing.T, tb *testbed.Testbed, reg *site.Registry) {
	t.Helper()
	err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteWildberries: {
		MinInterval: "300ms", Endpoints: map[string]string{wildberries.EndpointBasket: tb.BasketPattern(false)}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// workerNamed runs an in-process worker until the returned stop is
// called or the test ends.
func workerNamed(t *testing.T, id string, reg *site.Registry) (stop func()) {
	t.Helper()
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks),
		ServerID: id, Concurrency: 4, Sites: reg, ShutdownTimeout: time.Second, PollInterval: testPoll})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", id, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func cardJobs(ids []string) []tasks.Job {
	var jobs []tasks.Job
	for _, id := range ids {
		jobs = append(jobs, tasks.Job{Site: testbed.SiteWildberries, Kind: wildberries.KindCard, Request: site.Request{ID: id}})
	}
	return jobs
}

func basketProducts(t *testing.T) map[string]testbed.Product {
	t.Helper()
	out := map[string]testbed.Product{}
	for _, p := range testbed.BasketProducts() {
		out[p.ID] = p
	}
	return out
}

// checkCards: the results hold each product's card (ID and title).
func checkCards(t *testing.T, rdb *redis.Client, byID map[string]testbed.Product, ids []string) {
	t.Helper()
	items, err := results.Read(context.Background(), rdb, testbed.SiteWildberries)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, it := range items {
		titles[it.ID] = it.Title
	}
	for _, id := range ids {
		if titles[id] != byID[id].Title || byID[id].Title == "" {
			t.Errorf("card %s: title %q, want %q", id, titles[id], byID[id].Title)
		}
	}
}

// cardRequests are the log's card.json requests of nm.
func cardRequests(entries []testbed.Entry, nm string) []testbed.Entry {
	var out []testbed.Entry
	for _, e := range entries {
		if strings.HasSuffix(e.Path, "/"+nm+"/info/ru/card.json") {
			out = append(out, e)
		}
	}
	return out
}

func served(entries []testbed.Entry) int {
	n := 0
	for _, e := range entries {
		if e.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// memory is the card kind's kept hosts in Redis.
func memory(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	m, err := rdb.HGetAll(context.Background(), tasks.MemoryKey(testbed.SiteWildberries, wildberries.KindCard)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func withoutTop(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != "top" && k != "upstreams" && k != "upstreams_at" { // the upstream map kept, if any
			out[k] = v
		}
	}
	return out
}

// checkBasketLog: every card was served by its own basket host and by no
// other (the deleted one by none), each card's requests came from one
// proxy (its job's session), and the sites saw no I1/I2 violation.
func checkBasketLog(t *testing.T, tb *testbed.Testbed, byID map[string]testbed.Product) {
	t.Helper()
	ips := map[string]map[string]bool{}
	for _, e := range tb.Log.Entries() {
		if e.Path == testbed.UpstreamsPath { // no map published: 404, and the probe as before
			if e.Status != http.StatusNotFound {
				t.Errorf("map read: status %d, want 404", e.Status)
			}
			continue
		}
		parts := strings.Split(e.Path, "/")
		if len(parts) < 4 || !strings.HasSuffix(e.Path, "/card.json") {
			t.Errorf("request %s %s: want only card.json requests", e.Host, e.Path)
			continue
		}
		nm, _ := strconv.ParseInt(parts[3], 10, 64)
		want := testbed.BasketHost(testbed.BasketHostOf(nm))
		if _, ok := byID[parts[3]]; !ok {
			want = "no host"
		}
		if (e.Status == http.StatusOK) != (e.Host == want) {
			t.Errorf("request %s %s: status %d; want 200 from %s alone", e.Host, e.Path, e.Status, want)
		}
		if ips[parts[3]] == nil {
			ips[parts[3]] = map[string]bool{}
		}
		ips[parts[3]][e.IP] = true
	}
	for nm, from := range ips {
		if len(from) != 1 {
			t.Errorf("card %s asked from %d proxies, want its session's one", nm, len(from))
		}
	}
	if rep := tb.Check(); !rep.OK() || rep.Requests == 0 {
		t.Errorf("politeness: %+v", rep)
	}
}

// TestCardHostFromUpstreamMap: with the testbed's basket CDN publishing
// its upstream map up to basket-56 (issue 36.4), through real farm
// proxies, a card on the moved vol (9000: basket-40, the table says 39)
// and one past the table in the map (vol 19000, basket-53) are each
// asked once, on their host; a card newer than the map (vol 22000,
// basket-57) is probed from the map's last host; the map is read once
// for the three jobs, and no vol is kept that the map gives.
func TestCardHostFromUpstreamMap(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 3, Seed: 11, Sites: map[string]testbed.SiteRules{
		testbed.SiteWildberries: {Upstreams: &testbed.UpstreamsRule{Upto: 56}, MinInterval: 200 * time.Millisecond,
			Punishment: testbed.TooMany429, BanFor: time.Minute, SessionCheck: true}}})
	useBasketHosts(t, tb, reg)
	byID := basketProducts(t)
	workerNamed(t, "upstreams", reg)
	for _, tc := range []struct {
		nm    string
		asked int
	}{{"900012345", 1}, {"1900012345", 1}, {"2200012345", 2}} {
		if c, infos := enqueueAndWait(t, rdb, reg, cardJobs([]string{tc.nm})); c.Completed != 1 {
			t.Fatalf("card %s: counts %+v (%s)", tc.nm, c, infos[0].LastErr)
		}
		if got := cardRequests(tb.Log.Entries(), tc.nm); len(got) != tc.asked || served(got) != 1 {
			t.Errorf("card %s: %d card.json requests, %d served; want %d, the last served", tc.nm, len(got), served(got), tc.asked)
		}
	}
	checkCards(t, rdb, byID, []string{"900012345", "1900012345", "2200012345"})
	reads := 0
	for _, e := range tb.Log.Entries() {
		if e.Path == testbed.UpstreamsPath {
			reads++
			if e.Host != testbed.UpstreamsHost || e.Status != http.StatusOK {
				t.Errorf("map read on %s: status %d (%s)", e.Host, e.Status, e.Refused)
			}
		}
	}
	if reads != 1 {
		t.Errorf("the map was read %d times, want once", reads)
	}
	if kept := withoutTop(memory(t, rdb)); kept["9000"] != "" || kept["19000"] != "" {
		t.Errorf("kept %v: want nothing for the vols the map gives", kept)
	}
}
