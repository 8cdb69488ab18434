package proxies

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// TestScriptsOnRedisCluster runs every broker script on a real three-master
// Redis Cluster, in every mode: a script that touched a key it was not
// given, or keys of two slots, fails there. Each mode has its own pool
// (the cluster has only db 0).
func TestScriptsOnRedisCluster(t *testing.T) {
	rc := testredis.Cluster(t)
	for _, mode := range []Mode{ModeShared, ModeExclusive, ModePartitioned} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			rdb := rc.Client()
			defer rdb.Close()
			pool := fmt.Sprintf("cluster-%s-%d", mode, time.Now().UnixNano())
			var clk clock
			b := NewRedisBroker(rdb, clk.config(Config{Pool: pool, Mode: mode, Default: noGap,
				Sites: map[string]SiteConfig{"a": {}, "b": {}}}))
			ps := importN(t, b, 4, ImportOptions{})
			var leases []*Lease
			for _, s := range []string{"a", "b"} {
				l, err := b.Lease(ctx, LeaseRequest{Site: s, Class: Datacenter, Holder: "h", Task: "task-" + s, TTL: time.Minute})
				if err != nil {
					t.Fatalf("lease %s: %v", s, err)
				}
				if l, err = b.Extend(ctx, l, 2*time.Minute); err != nil {
					t.Fatalf("extend: %v", err)
				}
				leases = append(leases, l)
			}
			if err := b.Release(ctx, leases[0], Banned("captcha")); err != nil {
				t.Fatalf("release banned: %v", err)
			}
			if err := b.Release(ctx, leases[1], OK(time.Millisecond)); err != nil {
				t.Fatalf("release ok: %v", err)
			}
			if err := b.Release(ctx, leases[1], OK(time.Millisecond)); !errors.Is(err, ErrStaleLease) {
				t.Fatalf("stale release: %v, want ErrStaleLease", err)
			}
			if l, err := b.LeaseProxy(ctx, LeaseRequest{Site: "b", Holder: "h", Task: "task-b", TTL: time.Minute}, leases[1].Proxy.ID); err != nil {
				t.Fatalf("lease proxy: %v", err)
			} else if err := b.Release(ctx, l, Failed("reset")); err != nil {
				t.Fatalf("release failed: %v", err)
			}
			if q, err := b.quarantines(ctx); err != nil || len(q) != 1 {
				t.Fatalf("quarantines: %v %v, want the one banned", q, err)
			}
			if n, err := b.UnbanAll(ctx); err != nil || n != 1 {
				t.Fatalf("unban all: %d %v, want 1", n, err)
			}
			if _, err := b.Import(ctx, testProxies(t, 6)[4:], ImportOptions{}); err != nil {
				t.Fatalf("import with synced sets: %v", err)
			}
			if n, err := b.Remove(ctx, ps[0].ID, ps[1].ID); err != nil || n != 2 {
				t.Fatalf("remove: %d %v, want 2", n, err)
			}
			st, err := b.Stats(ctx)
			if err != nil || st.Total != 4 {
				t.Fatalf("stats: %+v %v, want 4 proxies", st, err)
			}
			if _, err := b.Lease(ctx, LeaseRequest{Site: "a", Class: Datacenter, Holder: "h", Task: "task-a2", TTL: time.Minute}); err != nil {
				t.Fatalf("lease after remove: %v", err)
			}
		})
	}
}

// TestRotationAndExitScriptsOnRedisCluster runs the modem and exit-IP
// scripts on the real Redis Cluster, with two sites' sets known: the
// rotation's scripts reach every set through the known HASH they are
// given, and must stay on its slot.
func TestRotationAndExitScriptsOnRedisCluster(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Cluster(t).Client()
	defer rdb.Close()
	var clk clock
	b := NewRedisBroker(rdb, clk.config(Config{Pool: fmt.Sprintf("cluster-modem-%d", time.Now().UnixNano()), Default: noGap,
		Sites: map[string]SiteConfig{"av": {}, "oz": {}}}))
	ps := importList(t, b, modemLine+"\nhttp://127.0.0.2:3128\n", ImportOptions{})
	m := ps[0]
	if err := b.Release(ctx, leaseModem(t, b, "oz", m), Neutral()); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkCleared(ctx, "av", m.ID, time.Minute); err != nil {
		t.Fatalf("mark cleared: %v", err)
	}
	r, err := b.BeginRotation(ctx, leaseModem(t, b, "av", m), time.Minute)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if err := b.ExtendRotation(ctx, r, time.Minute); err != nil {
		t.Fatalf("extend: %v", err)
	}
	if wait, err := b.MayChange(ctx, r); err != nil || wait != 0 {
		t.Fatalf("may change: %s %v", wait, err)
	}
	if err := b.Changed(ctx, r); err != nil {
		t.Fatalf("changed: %v", err)
	}
	if err := b.EndRotation(ctx, r, RotationResult{IP: "10.0.0.7", Took: time.Second}); err != nil {
		t.Fatalf("end: %v", err)
	}
	if a, err := b.ModemSend(ctx, m, "av", "10.0.0.7"); err != nil || a != ModemSendOK {
		t.Fatalf("modem send: %v %v", a, err)
	}
	h, err := b.HoldExit(ctx, ExitRequest{Site: "av", IP: "10.0.0.7", Holder: "s", TTL: time.Minute})
	if err != nil {
		t.Fatalf("hold exit: %v", err)
	}
	if h, err = b.ExtendExit(ctx, h, time.Minute); err != nil {
		t.Fatalf("renew exit: %v", err)
	}
	if err := b.ReleaseExit(ctx, h); err != nil {
		t.Fatalf("release exit: %v", err)
	}
	if _, err := b.BanExit(ctx, "av", "10.0.0.7", nil); err != nil {
		t.Fatalf("ban exit: %v", err)
	}
}
