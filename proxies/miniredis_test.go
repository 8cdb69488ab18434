package proxies

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// The zero-setup demo runs the broker on embedded miniredis: the scripts
// (Lua, TIME, ZSET ranges) must work there too.
func TestBrokerOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ck := &clock{}
	b := NewRedisBroker(rdb, ck.config(Config{Default: SiteConfig{MinInterval: time.Second}}))
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatalf("lease on miniredis: %v", err)
	}
	if _, err := b.Extend(ctx, l, 2*time.Minute); err != nil {
		t.Fatalf("extend: %v", err)
	}
	if err := b.Release(ctx, l, OK(10*time.Millisecond)); err != nil {
		t.Fatalf("release: %v", err)
	}
	_, err = b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	// The release rounds its moment up to the next ms (I2: TIME's ms floor
	// may be up to 1ms behind the response), so the wait is at most
	// min_interval + 1ms when the lease comes within the release's ms.
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Wait <= 0 || nr.Wait > time.Second+time.Millisecond {
		t.Fatalf("within min_interval: err = %v, want *NotReadyError with Wait in (0, 1.001s]", err)
	}
	ck.advance(nr.Wait)
	l, err = b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatalf("after min_interval: %v", err)
	}
	if err := b.Release(ctx, l, Banned("captcha")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("after ban: err = %v, want ErrPoolExhausted", err)
	}
	if st, err := b.Stats(ctx); err != nil || st.Sites["wb"].Quarantined != 1 {
		t.Fatalf("stats = %+v, %v; want 1 quarantined", st, err)
	}
}
