package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"crawlq/proxies"
	"crawlq/sessions"
)

// TestOpenWithNoProxySoonTakesATurn: with HandBack, a task whose site has
// no proxy ready gets a *WaitError instead of a session, with its turn in
// the site's wait line; the next task's turn comes after it (the line
// spaces them), and neither holds a lease. Once the proxy is free, Open
// gives a session.
func TestOpenWithNoProxySoonTakesATurn(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, 1)
	held, err := w.broker.Lease(ctx, proxies.LeaseRequest{Site: wb, Class: proxies.Datacenter, Holder: "elsewhere", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, Holder: "s1",
		LeaseTTL: 10 * time.Second, MaxLeaseWait: 50 * time.Millisecond, HandBack: true})
	var turns []time.Time
	for _, task := range []string{"first", "second"} {
		s, err := m.Open(ctx, task, wb, proxies.Datacenter)
		var we *sessions.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("%s: Open = %v, %v; want a *WaitError", task, s, err)
		}
		if we.Site != wb || we.Class != proxies.Datacenter || we.Wait <= 0 {
			t.Errorf("%s: %+v; want a turn for %s datacenter ahead", task, we, wb)
		}
		turns = append(turns, we.Turn)
	}
	if !turns[1].After(turns[0]) {
		t.Errorf("turns %v: the second should come after the first", turns)
	}
	if len(m.Waiting()) > 0 && m.Waiting()[wb] != 0 {
		t.Errorf("still waiting in slots: %v", m.Waiting())
	}
	if err := w.broker.Release(ctx, held, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
	m2 := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, Holder: "s1",
		LeaseTTL: 10 * time.Second, MaxLeaseWait: 5 * time.Second, HandBack: true})
	s, err := m2.Open(ctx, "first", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("Open once the proxy is free: %v", err)
	}
	_ = s.Close(ctx, proxies.Neutral())
}
