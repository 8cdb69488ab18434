package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"crawlq/internal/testredis"
	"crawlq/lab/bench/naivepolicy"
	"crawlq/proxies"
)

func naiveProxies(t *testing.T, n int) []proxies.Proxy {
	t.Helper()
	ps := make([]proxies.Proxy, n)
	for i := range ps {
		p, err := proxies.ParseLine(fmt.Sprintf("http://127.0.0.%d:8080", i+2))
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

// TestNaivePolicyKeepsTheArticlesFaults: the baseline must behave like the
// article, faults included, or the comparison is not with the article.
func TestNaivePolicyKeepsTheArticlesFaults(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBBench)
	b := naivepolicy.New(rdb, naivepolicy.Config{})
	if err := b.LoadPool(ctx, naiveProxies(t, 1)); err != nil {
		t.Fatal(err)
	}
	first, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "server-a", Task: "t1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var nr *proxies.NotReadyError
	if _, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "server-b", Task: "t2", TTL: time.Minute}); !errors.As(err, &nr) {
		t.Fatalf("second lease of a locked one-proxy pool: got %v, want NotReadyError", err)
	}
	if first.Token != 0 || first.MinInterval != 0 {
		t.Errorf("lease has token %d, min interval %s; the article has neither", first.Token, first.MinInterval)
	}
	// fault 2: A's lock expires (its TTL passes), B takes the proxy, and
	// A's late release deletes B's lock, so C gets the IP B still uses.
	rdb.Del(ctx, naivepolicy.DefaultPrefix+"lock:"+first.Proxy.URL().String())
	if _, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "server-b", Task: "t2", TTL: time.Minute}); err != nil {
		t.Fatalf("lease after the lock expired: %v", err)
	}
	if err := b.Release(ctx, first, proxies.OK(0)); err != nil {
		t.Errorf("a stale release is no error without fencing: %v", err)
	}
	c, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "server-c", Task: "t3", TTL: time.Minute})
	if err != nil || c.Proxy.ID != first.Proxy.ID {
		t.Errorf("C leases the proxy B holds: got %v, %v; the article's DEL lets it", c, err)
	}
}

// TestNaivePolicyBansOnStatusOnly: a 429 or a blocked status removes the
// proxy from the pool for good; a content ban (captcha page) does not.
func TestNaivePolicyBansOnStatusOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    proxies.Outcome
		banned bool
	}{
		{"429 rate limited", proxies.RateLimited(time.Minute), true},
		{"403 blocked status", proxies.Banned(naivepolicy.BlockedStatusReason), true},
		{"transport error", proxies.Failed("timeout"), true},
		{"captcha page with 200", proxies.Banned("captcha marker"), false},
		{"ok", proxies.OK(time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := testredis.Client(t, testredis.DBBench)
			b := naivepolicy.New(rdb, naivepolicy.Config{})
			if err := b.LoadPool(ctx, naiveProxies(t, 1)); err != nil {
				t.Fatal(err)
			}
			l, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "s", Task: "t", TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Release(ctx, l, tc.out); err != nil {
				t.Fatal(err)
			}
			st, _ := b.Stats(ctx)
			if gone := st.Total == 0; gone != tc.banned {
				t.Errorf("proxy removed from the pool: %v, want %v", gone, tc.banned)
			}
		})
	}
}

// TestNaivePolicyStickyResumeSkipsTheLock: get_sticky_proxy hands the
// remembered proxy out while another holder has it locked (fault 5).
func TestNaivePolicyStickyResumeSkipsTheLock(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBBench)
	b := naivepolicy.New(rdb, naivepolicy.Config{})
	ps := naiveProxies(t, 1)
	if err := b.LoadPool(ctx, ps); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lease(ctx, proxies.LeaseRequest{Site: "wb", Class: proxies.Datacenter, Holder: "a", Task: "t1", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	l, err := b.LeaseProxy(ctx, proxies.LeaseRequest{Site: "wb", Holder: "b", Task: "t2", TTL: time.Minute}, ps[0].ID)
	if err != nil || l.Proxy.ID != ps[0].ID {
		t.Fatalf("sticky resume of a locked proxy: %v, %v; want it handed out", l, err)
	}
	if _, err := b.LeaseProxy(ctx, proxies.LeaseRequest{Site: "wb", Holder: "b", Task: "t2", TTL: time.Minute}, "nope"); !errors.Is(err, proxies.ErrUnknownProxy) {
		t.Errorf("unknown proxy: got %v, want ErrUnknownProxy", err)
	}
}
