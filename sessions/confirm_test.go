package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// confirmWorld is a testbed of n proxies in a broker with the testbed's
// Wildberries min_interval (and a margin), a manager whose confirmations wait wait for a second
// proxy, and the URL of a Wildberries search with no results (a Suspect
// answer every proxy agrees on).
type confirmWorld struct {
	tb  *testbed.Testbed
	rdb *redis.Client
	b   *proxies.RedisBroker
	m   *sessions.Manager
	f   *fetcher.Fetcher
	d   *detect.Detector
	url string
}

func newConfirmWorld(t *testing.T, n int, wait time.Duration) *confirmWorld {
	t.Helper()
	return newConfirmWorldOf(t, testbed.Config{Proxies: n}, wait)
}

// newConfirmWorldOf is newConfirmWorld on a testbed of cfg.
func newConfirmWorldOf(t *testing.T, cfg testbed.Config, wait time.Duration) *confirmWorld {
	t.Helper()
	rdb := testredis.Client(t, testredis.DBSessions)
	tb, err := testbed.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	gap := testbed.DefaultRules()[testbed.SiteWildberries].MinInterval + 50*time.Millisecond
	b := proxies.NewRedisBroker(rdb, proxies.Config{Default: proxies.SiteConfig{MinInterval: gap}})
	var ps []proxies.Proxy
	for _, fp := range tb.Farm.Proxies() {
		p, err := proxies.ParseLine(fp.URL)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := b.Import(context.Background(), ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
	return &confirmWorld{tb: tb, rdb: rdb, b: b,
		m: sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, Holder: "s1", LeaseTTL: 10 * time.Second, ConfirmWait: wait}),
		f: fetcher.New(fetcher.Config{Timeout: 2 * time.Second}), d: detect.New(detect.Builtin()),
		url: tb.SiteURL("wildberries") + testbed.WBSearchPath + "?query=" + tb.Catalog.NoResultQueries("wildberries", 1)[0] + "&page=1"}
}

// suspect opens the task's session and gets the no-result search: a
// Suspect answer, the session going on.
func (w *confirmWorld) suspect(t *testing.T, task string) (*sessions.Session, sessions.Step) {
	t.Helper()
	return w.suspectAt(t, task, w.url)
}

// suspectAt opens the task's session and gets url, which must answer
// Suspect (a no-result search, or one a soft ban hid), the session going
// on.
func (w *confirmWorld) suspectAt(t *testing.T, task, url string) (*sessions.Session, sessions.Step) {
	t.Helper()
	s, err := w.m.Open(context.Background(), task, "wildberries", proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Get(context.Background(), w.f, w.d, "search", url, 1)
	if err != nil || first.Verdict.Kind != detect.Suspect || first.Action != sessions.Continue {
		t.Fatalf("first answer %v (%v, action %v), want suspect and the session going on", first.Verdict, err, first.Action)
	}
	return s, first
}

func (w *confirmWorld) confirm(t *testing.T, s *sessions.Session, first sessions.Step) sessions.Confirmation {
	t.Helper()
	c, err := s.Confirm(context.Background(), w.f, w.d, "search", w.url, 1, first, sessions.Control{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hold leases proxy id for the test, once it has cooled down; it is
// released when the test ends, if the test has not released it.
func (w *confirmWorld) hold(t *testing.T, id string) *proxies.Lease {
	t.Helper()
	l, err := w.b.LeaseProxy(context.Background(), proxies.LeaseRequest{Site: "wildberries", Holder: "test", Task: "hold", TTL: time.Minute}, id)
	var nr *proxies.NotReadyError
	for errors.As(err, &nr) {
		time.Sleep(nr.Wait) // the broker's own ready time
		l, err = w.b.LeaseProxy(context.Background(), proxies.LeaseRequest{Site: "wildberries", Holder: "test", Task: "hold", TTL: time.Minute}, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.b.Release(context.Background(), l, proxies.Neutral()) })
	return l
}

// TestConfirmDefersWithoutSecondProxy: a Suspect answer in a pool of one
// proxy cannot be confirmed now: the confirmation waits its wait (at
// least; how much longer the machine's scheduler takes is not asserted),
// is deferred (undecided, no second proxy, no request), the
// session ends, and its proxy goes back to the pool at once, unpunished
// (no ban, no failure, not held for UnconfirmedHold), so the jobs waiting
// for a proxy get it.
func TestConfirmDefersWithoutSecondProxy(t *testing.T) {
	const wait = 200 * time.Millisecond
	w := newConfirmWorld(t, 1, wait)
	s, first := w.suspect(t, "job")
	c := w.confirm(t, s, first)
	if !c.Deferred || c.Decision != detect.Undecided || c.Action != sessions.Retired || c.SecondProxy.ID != "" || c.Requests != 0 {
		t.Errorf("confirmation %+v: want deferred, undecided, retired, no second proxy, no request", c)
	}
	if c.Waited < wait {
		t.Errorf("waited %s for a second proxy, want at least the wait, %s", c.Waited, wait)
	}
	st, err := w.b.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ps := st.Proxies[0].Sites["wildberries"]
	if ps.State == "leased" || ps.State == "quarantined" || ps.Banned != 0 || ps.Failed != 0 || ps.ReadyAt.After(st.At.Add(time.Second)) {
		t.Errorf("proxy %s (%d bans, %d failures, ready in %s) after a deferred confirmation, want back in the pool unpunished",
			ps.State, ps.Banned, ps.Failed, ps.ReadyAt.Sub(st.At))
	}
}

// TestKeptAnswerDecidedByAnotherProxy: a deferred confirmation keeps its
// answer; the task's next attempt on another proxy gets the same answer
// and Confirm settles it on the kept one (agreed, no second lease, no
// request, the session going on) and uses it up. An attempt on the proxy
// that gave the kept answer is no second opinion: it defers again.
func TestKeptAnswerDecidedByAnotherProxy(t *testing.T) {
	w := newConfirmWorld(t, 2, 100*time.Millisecond)
	ids := []string{}
	st, err := w.b.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Proxies {
		ids = append(ids, p.ID)
	}
	other := w.hold(t, ids[1]) // the only other proxy: no second one is free
	s, first := w.suspect(t, "job")
	if got := s.ProxyID(); got != ids[0] {
		t.Fatalf("session on %s, want %s", got, ids[0])
	}
	if c := w.confirm(t, s, first); !c.Deferred {
		t.Fatalf("confirmation %+v, want deferred", c)
	}
	again, first := w.suspect(t, "job") // the same proxy, the only one free
	if c := w.confirm(t, again, first); !c.Deferred || c.Kept {
		t.Fatalf("the kept answer's own proxy asked again: %+v, want deferred again", c)
	}
	w.hold(t, ids[0])
	if err := w.b.Release(context.Background(), other, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
	next, first := w.suspect(t, "job")
	c := w.confirm(t, next, first)
	if c.Decision != detect.Agreed || !c.Kept || c.Deferred || c.Requests != 0 || c.Waited != 0 ||
		c.Action != sessions.Continue || c.SecondProxy.ID != ids[0] || next.ProxyID() != ids[1] {
		t.Errorf("confirmation %+v on %s: want agreed with the answer %s kept, no request, the session going on", c, next.ProxyID(), ids[0])
	}
	if n, err := w.rdb.Exists(context.Background(), sessions.KeptKey("job")).Result(); err != nil || n != 0 {
		t.Errorf("kept answer still there (%d, %v) once used", n, err)
	}
	_ = next.Finish(context.Background(), proxies.OK(0))
}
