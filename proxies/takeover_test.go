package proxies

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLeaseProxyTakesOverSameTaskOnly: a retried task takes back the live
// lease its dead worker left (the old token is fenced out, the first send
// is spaced by min_interval); another task is refused.
func TestLeaseProxyTakesOverSameTaskOnly(t *testing.T) {
	ctx := context.Background()
	b := servers(t, 1, Config{Default: SiteConfig{MinInterval: 200 * time.Millisecond}})[0]
	p := importN(t, b, 1, ImportOptions{Class: Datacenter})[0]
	old, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "dead-server", Task: "task-1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "server-2", Task: "task-2", TTL: time.Minute}, p.ID); !errors.Is(err, ErrBusy) {
		t.Fatalf("another task took a live lease: %v", err)
	}
	l, err := b.LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "server-2", Task: "task-1", TTL: time.Minute}, p.ID)
	if err != nil {
		t.Fatalf("same task could not take over: %v", err)
	}
	if l.Token <= old.Token || l.NotBefore.Sub(old.NotBefore) < 200*time.Millisecond {
		t.Fatalf("takeover token %d (old %d), not before +%s; want a newer token and min_interval spacing",
			l.Token, old.Token, l.NotBefore.Sub(old.NotBefore))
	}
	if err := b.Release(ctx, old, OK(time.Millisecond)); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("dead holder's release after takeover: %v, want ErrStaleLease", err)
	}
	if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
		t.Fatalf("release by the new holder: %v", err)
	}
}
