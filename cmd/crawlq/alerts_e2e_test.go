package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testpg"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/pgsink"
	"crawlq/testbed"
)

// hookReceiver is a loopback webhook that records the alerts it accepts
// by Idempotency-Key; while down it answers 500 and accepts none.
type hookReceiver struct {
	mu       sync.Mutex
	down     bool
	accepted map[string]int
	refused  int
	srv      *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{accepted: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a pgsink.Alert
		err := json.NewDecoder(r.Body).Decode(&a)
		h.mu.Lock()
		defer h.mu.Unlock()
		key := r.Header.Get("Idempotency-Key")
		if h.down || err != nil || key == "" || key != a.Key || a.Text == "" {
			h.refused++
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		h.accepted[key]++
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) setDown(down bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = down
}

func (h *hookReceiver) snapshot() (map[string]int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.accepted {
		out[k] = v
	}
	return out, h.refused
}

// pricesFarm is the acceptance run's parts: a testbed whose prices move
// every step, crawlq processes against it, and the webhook.
type pricesFarm struct {
	tb        *testbed.Testbed
	redisURL  string
	pg        string
	cfg       string
	query     string
	hook      *hookReceiver
	rdb       *redis.Client
	conn      *pgx.Conn
	sinkArgs  []string
	startedAt time.Time
}

// TestPriceChangesReachResultsAndAlertsOnce is issue 30's acceptance
// over the farm: a schedule crawls a Wildberries search every 2s on a
// testbed whose prices move every 4s; the sink is killed with kill -9
// and restarted mid-run while the webhook is down (500). Every change the
// testbed made between two observations of an item is in `results
// changes`, and every one a rule matches reaches the webhook once by its
// key: none missed, none repeated.
func TestPriceChangesReachResultsAndAlertsOnce(t *testing.T) {
	f := startPricesFarm(t)
	ctx := context.Background()
	f.run(t, "schedule", "add", "watch", "--cron", "@every 2s", "--", "wildberries", "search", f.query)
	f.addRules(t) // after the schedule: a rule's --schedule must exist
	startMain(t, "--redis", f.redisURL, "--log-level", "warn", "worker", "--config", f.cfg, "--queues", "wildberries=1",
		"--poll-interval", "200ms", "--browsers", "0", "--concurrency", "4")
	scheduler := startMain(t, "--redis", f.redisURL, "--log-level", "warn", "scheduler", "--sync", "1s")
	sink := startMain(t, f.sinkArgs...)

	waitFor(t, 120*time.Second, "four ticks observed", func() bool { return f.ticks(t) >= 4 })
	f.hook.setDown(true)
	waitFor(t, 120*time.Second, "an alert failing while the webhook is down", func() bool {
		st, err := pgsink.AlertStatus(ctx, f.conn)
		return err == nil && st.Failing > 0
	})
	_ = sink.Process.Kill() // kill -9: no ack, no mark of what it was posting
	_ = sink.Wait()
	at := f.ticks(t)
	waitFor(t, 60*time.Second, "the stream growing while no sink runs", func() bool {
		b, err := results.ReadBacklog(ctx, f.rdb, 0)
		return err == nil && b.Unacked >= 20
	})
	t.Logf("sink killed -9 after %d ticks; restarted with the webhook still down", at)
	startMain(t, f.sinkArgs...)
	waitFor(t, 120*time.Second, "two more ticks stored", func() bool { return f.ticks(t) >= at+2 })
	f.hook.setDown(false)
	waitFor(t, 300*time.Second, "25 price changes made while watched", func() bool {
		time.Sleep(500 * time.Millisecond) // a poll reads every observation: not every 10ms
		return f.madeOnWatched(t) >= 25
	})
	_ = scheduler.Process.Kill()
	_ = scheduler.Wait()
	f.waitSettled(t)
	f.verify(t)
}

func startPricesFarm(t *testing.T) *pricesFarm {
	t.Helper()
	dir := t.TempDir()
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 6, Seed: 30, CatalogSize: 400,
		PriceEvery: 4 * time.Second, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	f := &pricesFarm{tb: tb, redisURL: testredis.URL(t, testredis.DBCmd), pg: testpg.DB(t), hook: newHookReceiver(t),
		cfg: filepath.Join(dir, "crawlq.yaml"), startedAt: time.Now()}
	f.rdb = testredis.Client(t, testredis.DBCmd) // flushed, once
	if err := os.WriteFile(f.cfg, tb.CrawlqConfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	f.query = watchQuery(t, tb.Catalog)
	f.run(t, "proxies", "import", tb.ProxiesFile)
	f.sinkArgs = []string{"--redis", f.redisURL, "--log-level", "warn", "sink", "--postgres", f.pg, "--claim-idle", "1s",
		"--alert-retry-max", "1s", "--batch", "50"}
	st, err := pgsink.Open(context.Background(), f.pg) // the schema, for the alert commands and the checks
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	f.conn, err = pgx.Connect(context.Background(), f.pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.conn.Close(context.Background()) })
	return f
}

// watchQuery is a title word of 40 to 100 Wildberries products: one
// search page.
func watchQuery(t *testing.T, c *testbed.Catalog) string {
	t.Helper()
	for _, p := range c.Products(testbed.SiteWildberries) {
		for _, w := range strings.Fields(p.Title) {
			if n := len(c.Matches(testbed.SiteWildberries, w)); n >= 40 && n <= testbed.PageSizes[testbed.SiteWildberries] {
				return w
			}
		}
	}
	t.Fatal("no word with 40-100 products")
	return ""
}

func (f *pricesFarm) run(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, err := runMain(t, append([]string{"--redis", f.redisURL}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	return out
}

// addRules: drops of 10% on every item, any 1% drop of ten items by id,
// and items of the schedule back in stock.
func (f *pricesFarm) addRules(t *testing.T) {
	t.Helper()
	var ids []string
	for _, p := range f.tb.Catalog.Matches(testbed.SiteWildberries, f.query)[:10] {
		ids = append(ids, p.ID)
	}
	hook := f.hook.srv.URL + "/bot777:" + masktest.WebhookToken + "/sendMessage?chat_id=1"
	for _, r := range [][]string{{"drops", "--drop-pct", "10"}, {"dips", "--ids", strings.Join(ids, ","), "--drop-pct", "1"},
		{"restock", "--schedule", "watch", "--back-in-stock"}} {
		f.run(t, append([]string{"alert", "add", r[0], "--site", "wildberries", "--webhook", hook, "--postgres", f.pg}, r[1:]...)...)
	}
}

// ticks is how many distinct ticks have rows (their tasks).
func (f *pricesFarm) ticks(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.conn.QueryRow(context.Background(), "SELECT count(DISTINCT task) FROM observations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// obsRow is one observation as stored.
type obsRow struct {
	id       string
	entry    string
	at       time.Time
	price    int64
	inStock  *bool
	servedAt time.Time // when the testbed served it (at, or just before a step start)
}

func (f *pricesFarm) observations(t *testing.T) map[string][]obsRow {
	t.Helper()
	rows, err := f.conn.Query(context.Background(), `SELECT id, entry_ms || '-' || entry_seq, observed_at, coalesce(price, 0), in_stock
	    FROM observations WHERE site = 'wildberries' ORDER BY id, observed_at, entry_ms, entry_seq`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]obsRow{}
	for rows.Next() {
		var o obsRow
		if err := rows.Scan(&o.id, &o.entry, &o.at, &o.price, &o.inStock); err != nil {
			t.Fatal(err)
		}
		out[o.id] = append(out[o.id], o)
	}
	return out
}

// madeOnWatched counts the price changes the testbed made to observed
// items between their first and last observation.
func (f *pricesFarm) madeOnWatched(t *testing.T) int {
	t.Helper()
	n := 0
	obs := f.observations(t)
	for _, ch := range f.tb.Catalog.Changes(testbed.SiteWildberries, f.startedAt, time.Now()) {
		os := obs[ch.ID]
		if len(os) > 0 && ch.Before.Price != ch.After.Price && ch.At.After(os[0].at) && !ch.At.After(os[len(os)-1].at) {
			n++
		}
	}
	return n
}

// waitSettled waits for the queue to run dry, the sink to acknowledge
// every entry and the outbox to have nothing pending.
func (f *pricesFarm) waitSettled(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBCmd})
	defer insp.Close()
	waitFor(t, 120*time.Second, "the queue empty", func() bool {
		q, err := insp.GetQueueInfo("wildberries")
		return err == nil && q.Pending == 0 && q.Active == 0
	})
	waitFor(t, 120*time.Second, "every entry acknowledged", func() bool {
		b, err := results.ReadBacklog(ctx, f.rdb, 0)
		return err == nil && b.Unacked == 0
	})
	waitFor(t, 120*time.Second, "no alert pending", func() bool {
		st, err := pgsink.AlertStatus(ctx, f.conn)
		return err == nil && st.Pending == 0
	})
}

// verify checks every observation against the testbed's truth, every
// change between two observations against `results changes`, and every
// alert the rules call for against what the webhook accepted.
func (f *pricesFarm) verify(t *testing.T) {
	t.Helper()
	out := f.run(t, "results", "changes", "--postgres", f.pg, "--since", "1h", "--json")
	var listed []pgsink.Change
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("results changes --json: %v\n%s", err, out)
	}
	changes := map[string]pgsink.Change{}
	for _, c := range listed {
		changes[c.ID+"@"+c.At.UTC().Format(time.RFC3339Nano)] = c
	}
	var tally struct{ made, seen, hidden, missed, wrong int }
	want := map[string]bool{}
	for id, os := range f.observations(t) {
		for k := range os {
			os[k].servedAt = f.served(t, os[k])
			if os[k].servedAt.IsZero() {
				tally.wrong++
				continue
			}
			if k == 0 || os[k-1].servedAt.IsZero() {
				continue
			}
			prev, cur := os[k-1], os[k]
			for _, key := range alertsFor(id, prev, cur, f.dipIDs()) {
				want[key] = true
			}
			made := f.madeBetween(id, prev.servedAt, cur.servedAt)
			tally.made += made
			if made == 0 && prev.price != cur.price {
				tally.wrong++
				t.Errorf("item %s: %d → %d at %s, but the testbed made no change", id, prev.price, cur.price, cur.at)
				continue
			}
			if prev.price == cur.price {
				tally.hidden += made // changed and changed back between two looks
				continue
			}
			tally.hidden += made - 1
			c, ok := changes[id+"@"+cur.at.UTC().Format(time.RFC3339Nano)]
			if !ok || c.From != prev.price || c.To != cur.price {
				tally.missed++
				t.Errorf("item %s: %d → %d at %s not in results changes (%+v)", id, prev.price, cur.price, cur.at, c)
				continue
			}
			tally.seen++
		}
	}
	got, refused := f.hook.snapshot()
	missed, repeated := 0, 0
	for key := range want {
		if got[key] == 0 {
			missed++
			t.Errorf("alert %s never reached the webhook", key)
		}
	}
	for key, n := range got {
		if n > 1 {
			repeated++
			t.Errorf("alert %s accepted %d times", key, n)
		}
		if !want[key] {
			t.Errorf("alert %s reached the webhook but no rule called for it", key)
		}
	}
	t.Logf("changes made %d, seen %d (in results changes), hidden between two looks %d, missed %d; observations off the testbed's truth %d",
		tally.made, tally.seen, tally.hidden, tally.missed, tally.wrong)
	t.Logf("alerts wanted %d, sent (accepted by key) %d, duplicates %d, missed %d; posts refused while the webhook was down %d",
		len(want), len(got), repeated, missed, refused)
	if tally.wrong != 0 || tally.missed != 0 || missed != 0 || repeated != 0 {
		t.Fatal("a change or an alert went wrong (see above)")
	}
	if tally.seen < 20 || refused == 0 {
		t.Fatalf("%d changes seen, %d posts refused: want at least 20 changes and a webhook that was down", tally.seen, refused)
	}
}

// served is when the testbed served o: its observed time, or a moment
// before it across a step start (the answer left the site before the
// worker stamped it); zero when the price matches neither.
func (f *pricesFarm) served(t *testing.T, o obsRow) time.Time {
	t.Helper()
	for _, at := range []time.Time{o.at, o.at.Add(-time.Second)} {
		p, err := f.tb.Catalog.ProductAt(testbed.SiteWildberries, o.id, at)
		if err != nil {
			t.Fatal(err)
		}
		if p.Price == o.price && o.inStock != nil && *o.inStock == p.InStock() {
			return at
		}
	}
	t.Errorf("item %s observed at %s: price %d, in stock %v; the testbed served neither", o.id, o.at, o.price, o.inStock)
	return time.Time{}
}

// madeBetween counts the testbed's price changes of id in (from, to].
func (f *pricesFarm) madeBetween(id string, from, to time.Time) int {
	n := 0
	for _, ch := range f.tb.Catalog.Changes(testbed.SiteWildberries, from, to) {
		if ch.ID == id && ch.Before.Price != ch.After.Price {
			n++
		}
	}
	return n
}

func (f *pricesFarm) dipIDs() []string {
	var ids []string
	for _, p := range f.tb.Catalog.Matches(testbed.SiteWildberries, f.query)[:10] {
		ids = append(ids, p.ID)
	}
	return ids
}

// alertsFor are the keys of the alerts the rules call for on a price
// change from prev to cur.
func alertsFor(id string, prev, cur obsRow, dips []string) []string {
	var keys []string
	key := func(rule string) string { return fmt.Sprintf("%s:wildberries:%s:%s", rule, id, cur.entry) }
	drop := 100 * float64(prev.price-cur.price) / float64(prev.price)
	if drop >= 10 {
		keys = append(keys, key("drops"))
	}
	if drop >= 1 && slices.Contains(dips, id) {
		keys = append(keys, key("dips"))
	}
	if prev.inStock != nil && !*prev.inStock && cur.inStock != nil && *cur.inStock {
		keys = append(keys, key("restock"))
	}
	sort.Strings(keys)
	return keys
}
