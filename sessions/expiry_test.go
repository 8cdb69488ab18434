package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"crawlq/proxies"
	"crawlq/sessions"
)

// failingExtend is a broker whose extends are never acknowledged, as when
// a failover's new master has no replica yet.
type failingExtend struct{ proxies.Broker }

func (failingExtend) Extend(context.Context, *proxies.Lease, time.Duration) (*proxies.Lease, error) {
	return nil, proxies.ErrNotReplicated
}

// TestSessionStopsAtLeaseExpiryWhenExtendsFail: a session whose extends
// keep failing stops sending (ErrLeaseLost) once its lease may have
// expired, so it never sends while the proxy could be leased to another
// holder (I1); a session whose extends succeed outlives its TTL.
func TestSessionStopsAtLeaseExpiryWhenExtendsFail(t *testing.T) {
	tests := []struct {
		name   string
		broker func(*world) proxies.Broker
		// ttl: the control's is long enough that a loaded machine still
		// extends in time (an extend is sent every third of it)
		ttl  time.Duration
		lost bool
	}{
		{name: "extends fail", broker: func(w *world) proxies.Broker { return failingExtend{w.broker} }, ttl: 300 * time.Millisecond, lost: true},
		{name: "extends succeed", broker: func(w *world) proxies.Broker { return w.broker }, ttl: 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1)
			ctx := context.Background()
			ttl := tc.ttl
			m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: tc.broker(w), Redis: w.rdb, Holder: "server-1", LeaseTTL: ttl})
			s, err := m.Open(ctx, "job-expiry", wb, proxies.Datacenter)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Finish(ctx, proxies.Neutral())
			// the first lease expires after ttl; poll until a whole TTL past that
			until := s.Lease().Expires.Add(ttl)
			for {
				err := s.Pace(ctx)
				lost := errors.Is(err, sessions.ErrLeaseLost)
				if err != nil && !lost {
					t.Fatal(err)
				}
				over := time.Now().After(until)
				if lost != tc.lost && (lost || over) {
					t.Fatalf("lost=%v at %s (first expiry %s): want lost=%v", lost, time.Now(), until.Add(-ttl), tc.lost)
				}
				if lost || over {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
