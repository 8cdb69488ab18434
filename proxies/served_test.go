package proxies

import (
	"context"
	"errors"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// TestLeaseSaysNoProxyOfTheClassServesTheSite: a lease of a class no
// proxy of the pool serves the site with is a *NotServedError counting
// the other classes' proxies for the site, not the empty pool's error and
// not a wait; an empty pool and a class whose every proxy is quarantined
// are still what they were (a wait for an import, a wait for the first to
// return).
func TestLeaseSaysNoProxyOfTheClassServesTheSite(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: noGap}))
	ctx := context.Background()
	lease := func(site string, class Class) error {
		_, err := b.Lease(ctx, LeaseRequest{Site: site, Class: class, Holder: "h", Task: "t", TTL: time.Minute})
		return err
	}
	if err := lease("avito", Residential); !errors.Is(err, ErrPoolEmpty) || errors.Is(err, ErrNotServed) {
		t.Fatalf("empty pool: err = %v, want ErrPoolEmpty", err)
	}
	ps := testProxies(t, 4)
	if _, err := b.Import(ctx, ps[:3], ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps[3:], ImportOptions{Class: Mobile, Sites: []string{"ozon"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, site string
		class      Class
		want       string
	}{
		{name: "one other class", site: "avito", class: Residential,
			want: "no residential proxy serves avito; the pool has 3 datacenter proxies for it"},
		{name: "two other classes", site: "ozon", class: Residential,
			want: "no residential proxy serves ozon; the pool has 3 datacenter proxies and 1 mobile proxy for it"},
		{name: "class limited to another site", site: "avito", class: Mobile,
			want: "no mobile proxy serves avito; the pool has 3 datacenter proxies for it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := lease(tc.site, tc.class)
			var ns *NotServedError
			if !errors.As(err, &ns) || !errors.Is(err, ErrNotServed) || errors.Is(err, ErrPoolEmpty) || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	for range 3 {
		l, err := b.Lease(ctx, LeaseRequest{Site: "avito", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, Banned("captcha")); err != nil {
			t.Fatal(err)
		}
	}
	var nr *NotReadyError
	if err := lease("avito", Datacenter); !errors.As(err, &nr) || !nr.Exhausted || errors.Is(err, ErrNotServed) {
		t.Fatalf("every datacenter proxy quarantined on avito: err = %v, want a *NotReadyError (exhausted)", err)
	}
}
