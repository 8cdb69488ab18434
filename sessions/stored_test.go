package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
)

// TestCallerStoredSession: a session of a manager that shares the
// caller's Redis writes no record on a response; the record lands only with the caller's transaction
// (StoreIn), a retry resumes it with the same IP and cookie, and the
// transaction of the last page deletes it.
func TestCallerStoredSession(t *testing.T) {
	w := newWorld(t, 3)
	ctx := context.Background()
	m := w.callerStoring("server-1", 10*time.Second)
	const task = "job-stored"
	key := sessions.RecordKey(task)

	st := preload(t, ctx, w.rdb, m, task)
	s, err := m.OpenStored(ctx, st, task, wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.tb.SiteURL(wb), 1), 1); err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("page 1: %v %v", step.Verdict, err)
	}
	if n := w.rdb.Exists(ctx, key).Val(); n != 0 {
		t.Fatalf("record written by the response itself; want it only with the caller's transaction")
	}
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { return s.StoreIn(ctx, p, false) }); err != nil {
		t.Fatalf("store: %v", err)
	}
	proxyID := s.ProxyID()
	_ = s.Close(ctx, proxies.Neutral()) // the attempt ends; the record stays

	for {
		s, err = m.OpenStored(ctx, preload(t, ctx, w.rdb, m, task), task, wb, proxies.Datacenter)
		var nr *proxies.NotReadyError
		if !errors.As(err, &nr) {
			break
		}
		time.Sleep(nr.Wait) // the proxy cools down for the site's min interval
	}
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !s.Resumed() || s.ProxyID() != proxyID {
		t.Fatalf("resumed=%v proxy %s; want the stored proxy %s", s.Resumed(), s.ProxyID(), proxyID)
	}
	if step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.tb.SiteURL(wb), 2), 2); err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("page 2: %v %v", step.Verdict, err)
	}
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { return s.StoreIn(ctx, p, true) }); err != nil {
		t.Fatalf("store last: %v", err)
	}
	if n := w.rdb.Exists(ctx, key).Val(); n != 0 {
		t.Fatalf("record left after the last page's transaction")
	}
	if err := s.Finish(ctx, proxies.OK(0)); err != nil {
		t.Fatalf("finish: %v", err)
	}
	es := siteEntries(w.tb, wb)
	if len(es) != 2 || es[1].IP != es[0].IP || es[1].Session != es[0].Session || es[1].Issued {
		t.Fatalf("testbed log %+v: want page 2 from the same IP with the same session cookie", es)
	}
}

// preload reads task's record as a caller does, in its own pipeline.
func preload(t *testing.T, ctx context.Context, rdb *redis.Client, m *sessions.Manager, task string) sessions.Preloaded {
	t.Helper()
	var st sessions.Preloaded
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { st = m.Preload(ctx, p, task, wb, proxies.Datacenter); return nil }); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("preload: %v", err)
	}
	return st
}

// TestFinishInCallersTransaction: with the broker on the records' Redis
// (Config.BrokerSharesRedis), the session's end (record deletion, proxy
// release) commits with the caller's transaction; a broker on another
// client is left to Finish.
func TestFinishInCallersTransaction(t *testing.T) {
	w := newWorld(t, 2)
	ctx := context.Background()
	const task = "job-finish-in"
	key := sessions.RecordKey(task)
	m := w.manager("server-1", 10*time.Second)
	s, err := m.Open(ctx, task, wb, proxies.Datacenter) // Open stores the record at once
	if err != nil {
		t.Fatal(err)
	}
	if n := w.rdb.Exists(ctx, key).Val(); n != 1 {
		t.Fatalf("record after Open: %d keys, want 1", n)
	}
	other := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: proxies.NewRedisBroker(testredis.NewClient(t, testredis.DBSessions), proxies.Config{}),
		Redis: w.rdb, Holder: "server-2", LeaseTTL: 10 * time.Second})
	if _, ok := w.finishIn(t, ctx, otherSession(t, ctx, other)); ok {
		t.Error("FinishIn with a broker on another client: ok, want the caller to Finish")
	}
	answer, ok := w.finishIn(t, ctx, s)
	if !ok {
		t.Fatal("FinishIn on the broker's own client: not ok")
	}
	if err := answer(ctx); err != nil {
		t.Fatalf("release answer: %v", err)
	}
	if n := w.rdb.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("record left after the transaction")
	}
	if err := w.broker.Release(ctx, ptr(s.Lease()), proxies.OK(0)); !errors.Is(err, proxies.ErrStaleLease) {
		t.Errorf("release after FinishIn: %v, want ErrStaleLease (the lease ended in the transaction)", err)
	}
	if err := s.Finish(ctx, proxies.OK(0)); err != nil {
		t.Errorf("Finish after FinishIn: %v, want a no-op", err)
	}
}

// finishIn runs FinishIn in a transaction with a write of the caller's.
func (w *world) finishIn(t *testing.T, ctx context.Context, s *sessions.Session) (func(context.Context) error, bool) {
	t.Helper()
	var answer func(context.Context) error
	var ok bool
	if _, err := w.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "caller:pages")
		answer, ok = s.FinishIn(ctx, p, proxies.OK(time.Millisecond))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return answer, ok
}

// otherSession opens a session of a task of its own on m, released when
// the test ends.
func otherSession(t *testing.T, ctx context.Context, m *sessions.Manager) *sessions.Session {
	t.Helper()
	s, err := m.Open(ctx, "job-other", wb, proxies.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Finish(context.Background(), proxies.Neutral()) })
	return s
}

func ptr[T any](v T) *T { return &v }
