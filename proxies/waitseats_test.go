package proxies

import (
	"context"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// TestWaitSeatsFollowTheProxies: jobs may wait in their slots for a
// site's proxies only while the live leases plus the waiting jobs stay
// within the proxies not quarantined; a seat given back, a lease
// released, frees one; a proxy banned takes one away; a waiter asking
// again keeps its one seat.
func TestWaitSeatsFollowTheProxies(t *testing.T) {
	ctx := context.Background()
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: SiteConfig{MinInterval: time.Second}})
	importN(t, b, 3, ImportOptions{Class: Datacenter})
	req := LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", TTL: time.Minute}
	held, err := b.Lease(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	seat := func(waiter string) Seat {
		t.Helper()
		s, err := b.Seat(ctx, "wb", Datacenter, waiter, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	steps := []struct {
		name   string
		before func()
		waiter string
		want   Seat
	}{
		{name: "1 lease, nobody waits", waiter: "h|a", want: Seat{Taken: true, Usable: 3, Leases: 1}},
		{name: "1 lease, 1 waits", waiter: "h|b", want: Seat{Taken: true, Usable: 3, Leases: 1, Waiting: 1}},
		{name: "full", waiter: "g|c", want: Seat{Usable: 3, Leases: 1, Waiting: 2}},
		{name: "asking again", waiter: "h|b", want: Seat{Taken: true, Usable: 3, Leases: 1, Waiting: 1}},
		{name: "a seat given back", waiter: "g|c", want: Seat{Taken: true, Usable: 3, Leases: 1, Waiting: 1},
			before: func() {
				if err := b.Unseat(ctx, "wb", Datacenter, "h|a"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the lease banned: 2 usable, 2 wait", waiter: "g|d", want: Seat{Usable: 2, Waiting: 2},
			before: func() {
				if err := b.Release(ctx, held, Banned("test")); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		if got := seat(s.waiter); got != s.want {
			t.Errorf("%s: seat %+v, want %+v", s.name, got, s.want)
		}
	}
}
