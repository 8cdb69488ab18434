package sessions_test

import (
	"context"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// TestConfirmWithoutSecondProxy: a Suspect answer in a pool of one proxy
// cannot be confirmed: the decision is undecided, the session ends, and
// its proxy cools down unpunished (not quarantined, no failure), so the
// job can retry.
func TestConfirmWithoutSecondProxy(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBSessions)
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	b := proxies.NewRedisBroker(rdb, proxies.Config{Default: proxies.SiteConfig{MinInterval: time.Millisecond}})
	importOne(t, b, tb, false)
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, Holder: "s1", LeaseTTL: 10 * time.Second, ConfirmWait: 200 * time.Millisecond})
	s, err := m.Open(ctx, "job", "wildberries", proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	f := fetcher.New(fetcher.Config{Timeout: 2 * time.Second})
	d := detect.New(detect.Builtin())
	u := tb.SiteURL("wildberries") + testbed.WBSearchPath + "?query=" + tb.Catalog.NoResultQueries("wildberries", 1)[0] + "&page=1"
	first, err := s.Get(ctx, f, d, "search", u, 1)
	if err != nil || first.Verdict.Kind != detect.Suspect || first.Action != sessions.Continue {
		t.Fatalf("first answer %v (%v, action %v), want suspect and the session going on", first.Verdict, err, first.Action)
	}
	c, err := s.Confirm(ctx, f, d, "search", u, 1, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision != detect.Undecided || c.Action != sessions.Retired || c.SecondProxy.ID != "" || c.Requests != 0 {
		t.Errorf("confirmation %+v: want undecided, retired, no second proxy, no request", c)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ps := st.Proxies[0].Sites["wildberries"]; ps.State != "cooling" || ps.Banned != 0 || ps.Failed != 0 {
		t.Errorf("proxy %s (%d bans, %d failures) after an unconfirmed suspect answer, want cooling unpunished", ps.State, ps.Banned, ps.Failed)
	}
}
