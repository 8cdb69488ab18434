package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
	"crawlq/sessions"
)

// TestPreloadedLease: Preload queues a fresh proxy's lease with the
// record's read; a task without a stored session opens on that lease (no
// second lease), a task with one resumes its proxy and the preloaded lease
// goes back, and Discard gives back a lease no session took. No lease is
// left held in any case.
func TestPreloadedLease(t *testing.T) {
	tests := []struct {
		name string
		// stored: the task ran before and kept its session
		stored  bool
		discard bool
	}{
		{name: "fresh task opens on the preloaded lease"},
		{name: "stored session resumes, the preloaded lease goes back", stored: true},
		{name: "discarded without a session", discard: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 2)
			ctx := context.Background()
			m := w.manager("server-1", 10*time.Second)
			const task = "job-preloaded"
			var storedProxy string
			if tc.stored {
				s, err := m.Open(ctx, task, wb, proxies.Datacenter) // Open stores the record
				if err != nil {
					t.Fatal(err)
				}
				storedProxy = s.ProxyID()
				_ = s.Close(ctx, proxies.Neutral())
			} else { // sync the broker's ready set, as any earlier job does
				l, err := w.broker.Lease(ctx, proxies.LeaseRequest{Site: wb, Class: proxies.Datacenter, Holder: "warm-up", Task: "warm-up", TTL: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if err := w.broker.Release(ctx, l, proxies.Neutral()); err != nil {
					t.Fatal(err)
				}
			}
			st := preloadLease(t, ctx, w.rdb, m, task)
			if n := leased(t, ctx, w.broker); n != 1 {
				t.Fatalf("%d leases after the preload, want the preloaded one", n)
			}
			if tc.discard {
				m.Discard(ctx, st.Lease)
				if n := leased(t, ctx, w.broker); n != 0 {
					t.Fatalf("%d leases after Discard, want 0", n)
				}
				return
			}
			s := openRetrying(t, ctx, m, st, task)
			if n := leased(t, ctx, w.broker); n != 1 {
				t.Errorf("%d leases with the session open, want only the session's", n)
			}
			if tc.stored && (!s.Resumed() || s.ProxyID() != storedProxy) {
				t.Errorf("resumed=%v on %s, want the stored proxy %s", s.Resumed(), s.ProxyID(), storedProxy)
			}
			if err := s.Finish(ctx, proxies.OK(0)); err != nil {
				t.Fatal(err)
			}
			if n := leased(t, ctx, w.broker); n != 0 {
				t.Errorf("%d leases after Finish, want 0", n)
			}
		})
	}
}

// preloadLease runs Preload, with a lease, in a pipeline of its own, as
// the job's progress read does.
func preloadLease(t *testing.T, ctx context.Context, rdb *redis.Client, m *sessions.Manager, task string) sessions.Preloaded {
	t.Helper()
	var st sessions.Preloaded
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		st = m.Preload(ctx, p, task, wb, proxies.Datacenter)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("preload: %v", err)
	}
	return st
}

// openRetrying opens from st, preloading again while the stored proxy
// cools down after its last use.
func openRetrying(t *testing.T, ctx context.Context, m *sessions.Manager, st sessions.Preloaded, task string) *sessions.Session {
	t.Helper()
	for {
		s, err := m.OpenStored(ctx, st, task, wb, proxies.Datacenter)
		var nr *proxies.NotReadyError
		if !errors.As(err, &nr) {
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		}
		time.Sleep(nr.Wait)
		st = preloadLease(t, ctx, m.Redis().(*redis.Client), m, task)
	}
}

func leased(t *testing.T, ctx context.Context, b *proxies.RedisBroker) int {
	t.Helper()
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sites[wb].Leased
}

// TestPreloadOfTheStoredProxyResumes: in a pool of one proxy, a retry's
// preloaded lease is the stored session's own proxy; the session resumes
// on it. (Given back, the lease set the proxy's ready-at a min_interval
// ahead, the resume found it cooling down, and so on every attempt: the
// task never ran again.)
func TestPreloadOfTheStoredProxyResumes(t *testing.T) {
	w := newWorld(t, 1)
	ctx := context.Background()
	m := w.manager("server-1", 10*time.Second)
	const task = "job-one-proxy"
	s, err := m.Open(ctx, task, wb, proxies.Datacenter) // Open stores the record
	if err != nil {
		t.Fatal(err)
	}
	stored := s.ProxyID()
	if err := s.Close(ctx, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
	// the first try may find the proxy cooling down after Close; the next
	// one, after the wait the broker gives, must resume
	for try := 1; ; try++ {
		st := preloadLease(t, ctx, w.rdb, m, task)
		s, err = m.OpenStored(ctx, st, task, wb, proxies.Datacenter)
		var nr *proxies.NotReadyError
		if !errors.As(err, &nr) {
			break
		}
		if try == 2 {
			t.Fatalf("try %d: %v; want the stored session resumed on the preloaded lease", try, err)
		}
		time.Sleep(nr.Wait)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !s.Resumed() || s.ProxyID() != stored {
		t.Errorf("resumed=%v on %s; want the stored session on %s", s.Resumed(), s.ProxyID(), stored)
	}
	if n := leased(t, ctx, w.broker); n != 1 {
		t.Errorf("%d leases with the session open, want only the session's", n)
	}
	if err := s.Finish(ctx, proxies.OK(0)); err != nil {
		t.Fatal(err)
	}
	if n := leased(t, ctx, w.broker); n != 0 {
		t.Errorf("%d leases after Finish, want 0", n)
	}
}
