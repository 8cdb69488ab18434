package pgsink_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

func ptr[T any](v T) *T { return &v }

// receiver is a loopback webhook that records alerts by Idempotency-Key;
// while down it answers 500 and records nothing.
type receiver struct {
	mu    sync.Mutex
	down  bool
	got   map[string]int
	last  map[string]pgsink.Alert
	srv   *httptest.Server
	delay time.Duration
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string]int{}, last: map[string]pgsink.Alert{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	var a pgsink.Alert
	err := json.NewDecoder(req.Body).Decode(&a)
	r.mu.Lock()
	down, delay := r.down, r.delay
	if !down && err == nil {
		r.got[req.Header.Get("Idempotency-Key")]++
		r.last[a.Key] = a
	}
	r.mu.Unlock()
	time.Sleep(delay) // a slow webhook, to overlap two senders' rounds
	if down || err != nil {
		http.Error(w, "down", http.StatusInternalServerError)
	}
}

func (r *receiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps(r.got)
}

func maps(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// outboxKeys are the outbox's keys, sorted.
func outboxKeys(t *testing.T, st *pgsink.Store) []string {
	t.Helper()
	rows, err := st.Conn().Query(context.Background(), "SELECT key FROM alert_outbox ORDER BY key")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for rows.Next() {
		var k string
		_ = rows.Scan(&k)
		keys = append(keys, k)
	}
	return keys
}

// TestAlertsDecidedWithTheRows: a drop of at least drop_pct, a fall to a
// price from above it and a return to stock fire their rules' alerts in
// the write's transaction; a smaller drop, a first sighting and items of
// no rule fire none; the same entries written again add no alert.
func TestAlertsDecidedWithTheRows(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	st, url := openStore(t)
	conn := connect(t, url)
	for _, r := range []pgsink.Rule{
		{Name: "drop", Site: "ozon", IDs: []string{"1", "2"}, DropPct: 10, Webhook: "http://127.0.0.1:1/a"},
		{Name: "cheap", Site: "ozon", Query: "Kettle", Below: 50000, Webhook: "http://127.0.0.1:1/b"},
		{Name: "stock", Site: "ozon", BackInStock: true, Webhook: "http://127.0.0.1:1/c"},
	} {
		if err := pgsink.AddRule(ctx, conn, r); err != nil {
			t.Fatal(err)
		}
	}
	obs := func(ms int64, id, title string, price int64, in bool, min int) pgsink.Observation {
		return pgsink.Observation{EntryMS: ms, Task: "t", Item: item.Item{Site: "ozon", ID: id, Title: title, Price: price,
			InStock: ptr(in), Currency: "RUB", URL: "https://ozon.test/" + id, FetchedAt: at.Add(time.Duration(min) * time.Minute)}}
	}
	first := []pgsink.Observation{obs(1, "1", "mug", 100000, false, 0), obs(2, "2", "cup", 100000, true, 0),
		obs(3, "3", "blue kettle", 100000, true, 0), obs(4, "4", "pan", 100000, true, 0)}
	second := []pgsink.Observation{obs(5, "1", "mug", 85000, true, 1), obs(6, "2", "cup", 95000, true, 1),
		obs(7, "3", "blue kettle", 45000, true, 1), obs(8, "4", "pan", 10000, true, 1)}
	for _, b := range [][]pgsink.Observation{first, second, second} {
		if _, err := st.Write(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"cheap:ozon:3:7-0", "drop:ozon:1:5-0", "stock:ozon:1:5-0"}
	if d := cmp.Diff(want, outboxKeys(t, st)); d != "" {
		t.Fatalf("outbox keys (-want +got):\n%s", d)
	}
	var body pgsink.Alert
	if err := conn.QueryRow(ctx, "SELECT payload FROM alert_outbox WHERE key = 'drop:ozon:1:5-0'").Scan(&body); err != nil {
		t.Fatal(err)
	}
	if body.OldPrice != 100000 || body.NewPrice != 85000 || !*body.InStock || body.Title != "mug" ||
		!body.ObservedAt.Equal(at.Add(time.Minute)) {
		t.Fatalf("payload %+v", body)
	}
}

// TestSenderDeliversOnceByKey: two senders deliver every alert of the
// outbox to a webhook that is down (500) at first: each key reaches it
// once, the failures are counted and retried with backoff, and
// AlertStatus tells the delivered, the pending and the last error with
// the webhook's secret masked.
func TestSenderDeliversOnceByKey(t *testing.T) {
	ctx := context.Background()
	st, url := openStore(t)
	conn := connect(t, url)
	rcv := newReceiver(t)
	rcv.down, rcv.delay = true, 5*time.Millisecond
	hook := rcv.srv.URL + "/bot123456:" + masktest.WebhookToken + "/sendMessage?chat_id=42#" + masktest.WebhookFragment
	if err := pgsink.AddRule(ctx, conn, pgsink.Rule{Name: "any", Site: "ozon", DropPct: 1, Webhook: hook}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var b []pgsink.Observation
	for i := range 30 {
		for k, price := range []int64{1000, 900} {
			b = append(b, pgsink.Observation{EntryMS: int64(100*k + i + 1), Task: "t", Item: item.Item{Site: "ozon",
				ID: string(rune('a'+i%26)) + string(rune('0'+i/26)), Price: price, FetchedAt: at.Add(time.Duration(k) * time.Minute)}})
		}
	}
	if _, err := st.Write(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	keys := outboxKeys(t, st)
	if len(keys) != 30 {
		t.Fatalf("%d alerts in the outbox, want 30", len(keys))
	}
	reg := prometheus.NewRegistry()
	m := pgsink.NewMetrics(reg, testredis.Client(t, testredis.DBSink))
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		s := pgsink.NewSender(pgsink.SenderConfig{Postgres: url, Batch: 4, Poll: 10 * time.Millisecond,
			RetryFirst: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond, Metrics: m, Logger: masktest.Logger(t)})
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(sctx) }()
	}
	defer func() { stop(); wg.Wait() }()
	waitFor(t, "a failed post", func() bool { return counterValue(t, reg, "crawlq_alerts_failed_total") >= 2 })
	as, err := pgsink.AlertStatus(ctx, conn)
	if err != nil || as.Failing == 0 || as.LastError == "" || strings.Contains(as.LastError, masktest.WebhookToken) ||
		!strings.Contains(as.LastError, "bot123456:***") {
		t.Fatalf("alert status while down: %+v %v", as, err)
	}
	rcv.mu.Lock()
	rcv.down = false
	rcv.mu.Unlock()
	waitFor(t, "every alert delivered", func() bool {
		as, err := pgsink.AlertStatus(ctx, conn)
		return err == nil && as.Delivered == 30
	})
	stop()
	wg.Wait()
	got := rcv.counts()
	for _, k := range keys {
		if got[k] != 1 {
			t.Errorf("key %s received %d times, want once", k, got[k])
		}
	}
	if a := rcv.last[keys[0]]; a.Key != keys[0] || a.Rule != "any" || a.ChangePct != -10 || !strings.Contains(a.Text, "10 ₽ → 9 ₽ (−10%)") {
		t.Errorf("body %+v: want the key, the rule, change_pct -10 and a text with (−10%%)", a)
	}
	as, err = pgsink.AlertStatus(ctx, conn)
	if err != nil || as.Delivered != 30 || as.Pending != 0 || as.Rules != 1 {
		t.Fatalf("alert status after: %+v %v", as, err)
	}
	if n := counterValue(t, reg, "crawlq_alerts_sent_total"); n != 30 {
		t.Errorf("crawlq_alerts_sent_total %v, want 30", n)
	}
}

// TestRuleCommands: add refuses a taken name and bad input naming the
// field; list shows the rule; remove drops it and says when there is none.
func TestRuleCommands(t *testing.T) {
	ctx := context.Background()
	_, url := openStore(t)
	conn := connect(t, url)
	r := pgsink.Rule{Name: "sneakers", Site: "wildberries", IDs: []string{"2", "1"}, Below: 199900, BackInStock: true,
		Webhook: "https://example.test/hook?token=abc"}
	if err := pgsink.AddRule(ctx, conn, r); err != nil {
		t.Fatal(err)
	}
	if err := pgsink.AddRule(ctx, conn, r); !errors.Is(err, pgsink.ErrRuleExists) {
		t.Fatalf("second add: %v, want ErrRuleExists", err)
	}
	for _, c := range []struct {
		r    pgsink.Rule
		want string
	}{
		{pgsink.Rule{Name: "a b", Site: "ozon", DropPct: 5, Webhook: "http://x.test/"}, "alert name"},
		{pgsink.Rule{Name: "a", Site: "ozon", DropPct: 150, Webhook: "http://x.test/"}, "drop-pct 150"},
		{pgsink.Rule{Name: "a", Site: "ozon", Webhook: "http://x.test/"}, "no condition"},
		{pgsink.Rule{Name: "a", Site: "ozon", DropPct: 5, Below: 5, Webhook: "http://x.test/"}, "drop-pct and below"},
		{pgsink.Rule{Name: "a", Site: "ozon", DropPct: 5, Webhook: "ftp://u:pw@x.test/"}, `webhook "ftp://u:***@x.test/"`},
	} {
		if err := pgsink.AddRule(ctx, conn, c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("add %+v: %v, want it to say %q", c.r, err, c.want)
		}
	}
	rs, err := pgsink.Rules(ctx, conn)
	if err != nil || len(rs) != 1 || !slices.Equal(rs[0].IDs, []string{"1", "2"}) || rs[0].Below != 199900 || !rs[0].BackInStock {
		t.Fatalf("rules: %+v %v", rs, err)
	}
	if err := pgsink.RemoveRule(ctx, conn, "sneakers"); err != nil {
		t.Fatal(err)
	}
	if err := pgsink.RemoveRule(ctx, conn, "sneakers"); !errors.Is(err, pgsink.ErrNoRule) {
		t.Fatalf("second remove: %v, want ErrNoRule", err)
	}
}

// TestSenderPrunesDoneAlerts: alerts delivered or given up longer ago
// than Keep leave the outbox; a newer done one and a pending one stay.
func TestSenderPrunesDoneAlerts(t *testing.T) {
	ctx := context.Background()
	_, url := openStore(t)
	conn := connect(t, url)
	for _, row := range []struct {
		key, done string
	}{{"old-delivered", "delivered_at = now() - interval '8 days'"}, {"old-given-up", "failed_at = now() - interval '9 days'"},
		{"new-delivered", "delivered_at = now() - interval '1 day'"}, {"pending", "next_try = now() + interval '1 hour'"}} {
		_, err := conn.Exec(ctx, `INSERT INTO alert_outbox (key, rule, site, id, webhook, payload) VALUES ($1, 'r', 'ozon', '1', 'http://127.0.0.1:9/', '{}')`, row.key)
		if err == nil {
			_, err = conn.Exec(ctx, `UPDATE alert_outbox SET `+row.done+` WHERE key = $1`, row.key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	s := pgsink.NewSender(pgsink.SenderConfig{Postgres: url, Poll: 10 * time.Millisecond, Keep: 7 * 24 * time.Hour, Logger: masktest.Logger(t)})
	go func() { defer close(done); _ = s.Run(sctx) }()
	defer func() { stop(); <-done }()
	waitFor(t, "the old alerts pruned", func() bool {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM alert_outbox WHERE key LIKE 'old-%'`).Scan(&n)
		return err == nil && n == 0
	})
	var left []string
	rows, err := conn.Query(ctx, `SELECT key FROM alert_outbox ORDER BY key`)
	if err == nil {
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || strings.Join(left, ",") != "new-delivered,pending" {
		t.Fatalf("outbox after pruning: %v %v", left, err)
	}
}

// TestAlertStatusPerRule: AlertStatus tells each rule's delivered,
// pending, failing and given-up alerts and its own last error, so the one
// rule whose webhook fails is named.
func TestAlertStatusPerRule(t *testing.T) {
	ctx := context.Background()
	_, url := openStore(t)
	conn := connect(t, url)
	for _, r := range []pgsink.Rule{
		{Name: "bad", Site: "ozon", DropPct: 5, Webhook: "http://127.0.0.1:1/b"},
		{Name: "good", Site: "avito", DropPct: 5, Webhook: "http://127.0.0.1:1/g"},
		{Name: "quiet", Site: "ozon", BackInStock: true, Webhook: "http://127.0.0.1:1/q"},
	} {
		if err := pgsink.AddRule(ctx, conn, r); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, row := range []struct {
		key, rule   string
		attempts    int
		delivered   bool
		failed      bool
		err         string
		lastTryMins int
	}{
		{"g1", "good", 1, true, false, "", 0},
		{"g2", "good", 2, true, false, "", 1},
		{"b1", "bad", 3, false, false, "webhook http://127.0.0.1:1/b: 502", 2},
		{"b2", "bad", 100, false, true, "webhook http://127.0.0.1:1/b: 500", 1},
		{"b3", "bad", 0, false, false, "", 0},
	} {
		var delivered, failed, lastTry *time.Time
		tt := at.Add(time.Duration(row.lastTryMins) * time.Minute)
		if row.delivered {
			delivered = &tt
		}
		if row.failed {
			failed = &tt
		}
		var lastErr *string
		if row.err != "" {
			lastErr, lastTry = &row.err, &tt
		}
		if _, err := conn.Exec(ctx, `INSERT INTO alert_outbox (key, rule, site, id, webhook, payload, attempts, delivered_at, failed_at, last_error, last_try)
		    VALUES ($1, $2, 'ozon', '1', 'http://127.0.0.1:1/', '{}', $3, $4, $5, $6, $7)`,
			row.key, row.rule, row.attempts, delivered, failed, lastErr, lastTry); err != nil {
			t.Fatal(err)
		}
	}
	st, err := pgsink.AlertStatus(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	want := []pgsink.RuleState{
		{Rule: "bad", Site: "ozon", Pending: 2, Failing: 1, GivenUp: 1, LastError: "webhook http://127.0.0.1:1/b: 502", LastErrorAt: at.Add(2 * time.Minute)},
		{Rule: "good", Site: "avito", Delivered: 2},
		{Rule: "quiet", Site: "ozon"},
	}
	if d := cmp.Diff(want, st.PerRule); d != "" {
		t.Errorf("per rule (-want +got):\n%s", d)
	}
	if got := []string{st.PerRule[0].State(), st.PerRule[1].State(), st.PerRule[2].State()}; strings.Join(got, ",") != "failing,ok,ok" {
		t.Errorf("states %v, want failing, ok, ok", got)
	}
}
