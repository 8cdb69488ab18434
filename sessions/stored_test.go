package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/proxies"
	"crawlq/sessions"
)

// TestCallerStoredSession: a session opened by OpenStored writes no record
// on a response; the record lands only with the caller's transaction
// (StoreIn), a retry resumes it with the same IP and cookie, and the
// transaction of the last page deletes it.
func TestCallerStoredSession(t *testing.T) {
	w := newWorld(t, 3)
	ctx := context.Background()
	m := w.manager("server-1", 10*time.Second)
	const task = "job-stored"
	key := "crawlq:session:" + task

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
func preload(t *testing.T, ctx context.Context, rdb *redis.Client, m *sessions.Manager, task string) *sessions.Stored {
	t.Helper()
	var st *sessions.Stored
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { st = m.Preload(ctx, p, task); return nil }); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("preload: %v", err)
	}
	return st
}
