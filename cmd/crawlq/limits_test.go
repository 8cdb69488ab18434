package main

import (
	"context"
	"strings"
	"testing"

	"crawlq/internal/testredis"
	"crawlq/proxies"
)

// TestLimitsPrintsAndPins: `crawlq limits` prints each learned limit with
// its bounds and last change; `limits pin` keeps a value the learner may
// not move, `limits log` shows it, `limits unpin` frees it.
func TestLimitsPrintsAndPins(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBCmd)
	b := proxies.NewRedisBroker(rdb, proxies.Config{})
	const name = "pace:wildberries:datacenter"
	ctx := context.Background()
	if err := b.EnsureLimit(ctx, name, proxies.LimitSpec{Start: 5000, Min: 100, Max: 5000, Unit: "ms"}); err != nil {
		t.Fatal(err)
	}
	l, _ := b.Limit(ctx, name)
	if _, err := b.SetLimit(ctx, name, l.Gen, 550, "8 clean answers at 550 ms"); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "limits")
	if err != nil || !strings.Contains(out, name) || !strings.Contains(out, "550ms") ||
		!strings.Contains(out, "100ms..5s") || !strings.Contains(out, "8 clean answers at 550 ms") {
		t.Fatalf("limits: %v\n%s", err, out)
	}
	if out, err = run(t, "limits", "pin", name, "800ms"); err != nil || !strings.Contains(out, "pinned at 800ms") {
		t.Fatalf("pin: %v\n%s", err, out)
	}
	l, _ = b.Limit(ctx, name)
	if _, err := b.SetLimit(ctx, name, l.Gen, 400, "learned"); err != nil {
		t.Fatal(err)
	}
	if l, _ = b.Limit(ctx, name); l.Value != 800 || !l.Pinned {
		t.Fatalf("after pin and a learner's change: %+v, want 800 pinned", l)
	}
	if out, err = run(t, "limits", "log", name); err != nil || !strings.Contains(out, "pinned by a user") {
		t.Fatalf("log: %v\n%s", err, out)
	}
	if _, err = run(t, "limits", "pin", name, "fast"); err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Fatalf("pin fast: %v, want an error naming the value", err)
	}
	if _, err = run(t, "limits", "unpin", name); err != nil {
		t.Fatal(err)
	}
	if l, _ = b.Limit(ctx, name); l.Pinned {
		t.Fatalf("still pinned after unpin: %+v", l)
	}
}
