package proxies

import (
	"context"
	"errors"
	"testing"

	"crawlq/internal/testredis"
)

// TestLearnedLimitStore: a limit starts at its start value once (a second
// EnsureLimit keeps what was learned, moving it inside new bounds), a
// change from an older gen is refused, a pinned limit never moves until
// unpinned, and every change is logged newest first.
func TestLearnedLimitStore(t *testing.T) {
	ctx := context.Background()
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Pool: "limits"})
	const name = "pace:shop:datacenter"
	spec := LimitSpec{Start: 2000, Min: 100, Max: 10000, Unit: "ms"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.EnsureLimit(ctx, name, spec))
	l, err := b.Limit(ctx, name)
	must(err)
	gen, err := b.SetLimit(ctx, name, l.Gen, 800, "learned")
	must(err)
	if _, err := b.SetLimit(ctx, name, l.Gen, 50, "stale"); !errors.Is(err, ErrStaleLimit) {
		t.Fatalf("a change from an older gen: %v, want ErrStaleLimit", err)
	}
	must(b.EnsureLimit(ctx, name, spec)) // a restart keeps the learned value
	if l, _ = b.Limit(ctx, name); l.Value != 800 || l.Reason != "learned" {
		t.Fatalf("after a second EnsureLimit: %+v, want 800 learned", l)
	}
	must(b.EnsureLimit(ctx, name, LimitSpec{Start: 2000, Min: 1000, Max: 10000, Unit: "ms"}))
	if l, _ = b.Limit(ctx, name); l.Value != 1000 || l.Reason != "bounds" {
		t.Fatalf("after raising min to 1000: %+v, want 1000 bounds", l)
	}
	must(b.PinLimit(ctx, name, 3000))
	l, _ = b.Limit(ctx, name)
	if _, err := b.SetLimit(ctx, name, l.Gen, 1500, "learned"); err != nil {
		t.Fatal(err)
	}
	if l, _ = b.Limit(ctx, name); l.Value != 3000 || !l.Pinned {
		t.Fatalf("a pinned limit moved: %+v", l)
	}
	must(b.UnpinLimit(ctx, name))
	if _, err := b.SetLimit(ctx, name, l.Gen, 1500, "learned"); err != nil {
		t.Fatal(err)
	}
	ls, err := b.Limits(ctx)
	must(err)
	if len(ls) != 1 || ls[0].Value != 1500 || ls[0].Pinned || ls[0].Unit != "ms" || ls[0].Min != 1000 {
		t.Fatalf("limits: %+v", ls)
	}
	log, err := b.LimitLog(ctx, name, 10)
	must(err)
	want := []int64{1500, 3000, 3000, 1000, 800, 2000}
	if len(log) != len(want) {
		t.Fatalf("log: %+v, want values %v", log, want)
	}
	for i, c := range log {
		if c.Value != want[i] {
			t.Fatalf("log[%d] = %+v, want value %d (log %+v)", i, c, want[i], log)
		}
	}
	_ = gen
	if _, err := b.SetLimit(ctx, "pace:none", 1, 1, "x"); !errors.Is(err, ErrUnknownLimit) {
		t.Fatalf("unknown limit: %v", err)
	}
}
