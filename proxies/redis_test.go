package proxies

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
)

// clock is an injectable skew so tests move the broker's time forward
// without sleeping.
type clock struct{ skew atomic.Int64 }

func (c *clock) advance(d time.Duration)  { c.skew.Add(int64(d)) }
func (c *clock) now() time.Duration       { return time.Duration(c.skew.Load()) }
func (c *clock) config(cfg Config) Config { cfg.Clock = c.now; return cfg }

// testProxies makes n distinct proxies on loopback.
func testProxies(t testing.TB, n int) []Proxy {
	t.Helper()
	ps := make([]Proxy, n)
	for i := range ps {
		p, err := ParseLine(fmt.Sprintf("http://user%d:pw%d@127.0.0.1:%d", i, i, 10000+i))
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

func importN(t testing.TB, b *RedisBroker, n int, opt ImportOptions) []Proxy {
	t.Helper()
	ps := testProxies(t, n)
	if _, err := b.Import(context.Background(), ps, opt); err != nil {
		t.Fatal(err)
	}
	return ps
}

// importList parses list (lines as in a proxies file) and imports it
// into b with opt.
func importList(t testing.TB, b *RedisBroker, list string, opt ImportOptions) []Proxy {
	t.Helper()
	ps, err := ParseReader(strings.NewReader(list), "list.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(context.Background(), ps, opt); err != nil {
		t.Fatal(err)
	}
	return ps
}

var noGap = SiteConfig{MinInterval: NoMinInterval}

// tracker counts live leases per key; a second live lease is a violation.
type tracker struct {
	mu    sync.Mutex
	live  map[string]int
	bad   int
	total int
}

func (tr *tracker) acquire(key string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.live == nil {
		tr.live = map[string]int{}
	}
	tr.live[key]++
	tr.total++
	if tr.live[key] > 1 {
		tr.bad++
	}
}

func (tr *tracker) release(key string) {
	tr.mu.Lock()
	tr.live[key]--
	tr.mu.Unlock()
}

// hammer runs clients x goroutines lease/release cycles and tracks overlaps
// of key(lease).
func hammer(t *testing.T, brokers []*RedisBroker, goroutines, cycles int, sites []string, key func(*Lease) string) *tracker {
	t.Helper()
	tr := &tracker{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(brokers)*goroutines)
	for bi, b := range brokers {
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range cycles {
					site := sites[(g+c)%len(sites)]
					l, err := b.LeaseWait(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: fmt.Sprintf("server%d", bi), Task: "t", TTL: 10 * time.Second})
					if err != nil {
						errs <- err
						return
					}
					tr.acquire(key(l))
					tr.release(key(l))
					if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return tr
}

// servers returns n brokers on n separate Redis clients, as n servers.
func servers(t *testing.T, n int, cfg Config) []*RedisBroker {
	out := []*RedisBroker{NewRedisBroker(testredis.Client(t, testredis.DBProxies), cfg)}
	for range n - 1 {
		out = append(out, NewRedisBroker(testredis.NewClient(t, testredis.DBProxies), cfg))
	}
	return out
}

func TestI1OneLeasePerProxyAndSite(t *testing.T) {
	bs := servers(t, 3, Config{Default: noGap})
	importN(t, bs[0], 4, ImportOptions{})
	tr := &tracker{}
	var mu sync.Mutex
	inner := hammer(t, bs, 32, 15, []string{"wb", "ozon"}, func(l *Lease) string {
		mu.Lock()
		defer mu.Unlock()
		tr.total++
		return l.Proxy.ID + "/" + l.Site
	})
	if inner.bad != 0 {
		t.Fatalf("%d overlapping leases of one (proxy, site) in %d leases", inner.bad, inner.total)
	}
	if inner.total != 3*32*15 {
		t.Fatalf("got %d leases, want %d", inner.total, 3*32*15)
	}
}

// holdingHammer keeps each lease live while checking, so overlaps are seen.
func TestI1LeasesOverlapNever(t *testing.T) {
	bs := servers(t, 3, Config{Default: noGap})
	importN(t, bs[0], 3, ImportOptions{})
	tr := &tracker{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for bi, b := range bs {
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					l, err := b.LeaseWait(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: fmt.Sprint("s", bi), Task: "t", TTL: 10 * time.Second})
					if err != nil {
						failed.Add(1)
						return
					}
					k := l.Proxy.ID
					tr.acquire(k)
					time.Sleep(100 * time.Microsecond) // hold the lease: a double lease now overlaps
					tr.release(k)
					if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
						failed.Add(1)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d goroutines failed", failed.Load())
	}
	if tr.bad != 0 {
		t.Fatalf("%d overlapping leases of one (proxy, site) among %d", tr.bad, tr.total)
	}
}

func TestI1ExclusiveModeOneLeasePerProxy(t *testing.T) {
	bs := servers(t, 3, Config{Mode: ModeExclusive, Default: noGap})
	importN(t, bs[0], 3, ImportOptions{})
	tr := hammer(t, bs, 8, 10, []string{"wb", "ozon", "avito"}, func(l *Lease) string { return l.Proxy.ID })
	if tr.bad != 0 {
		t.Fatalf("exclusive mode: %d overlapping leases of one proxy across sites", tr.bad)
	}
	// And directly: a proxy leased on one site is not handed out on another.
	ctx := context.Background()
	b := bs[0]
	var held []*Lease
	for range 3 {
		l, err := b.LeaseWait(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	_, err := b.Lease(ctx, LeaseRequest{Site: "ozon", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if !errors.Is(err, ErrNoProxy) {
		t.Fatalf("lease on ozon while all proxies are leased on wb: err = %v, want ErrNoProxy", err)
	}
	if err := b.Release(ctx, held[0], OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
}

func TestSharedModeServesSitesAtOnce(t *testing.T) {
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: noGap})
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	l1, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := b.Lease(ctx, LeaseRequest{Site: "ozon", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatalf("shared mode: second site should get the same proxy: %v", err)
	}
	if l1.Proxy.ID != l2.Proxy.ID {
		t.Fatalf("got different proxies from a pool of one")
	}
}

func TestI2MinIntervalAcrossServers(t *testing.T) {
	const gap = 40 * time.Millisecond
	bs := servers(t, 3, Config{Default: SiteConfig{MinInterval: gap}})
	importN(t, bs[0], 2, ImportOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	starts := map[string][]time.Time{}
	var wg sync.WaitGroup
	for _, b := range bs {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 4 {
					l, err := b.LeaseWait(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: 10 * time.Second})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					starts[l.Proxy.ID] = append(starts[l.Proxy.ID], l.NotBefore)
					mu.Unlock()
					if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	n := 0
	for id, ts := range starts {
		sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
		for i := 1; i < len(ts); i++ {
			n++
			if d := ts[i].Sub(ts[i-1]); d < gap {
				t.Errorf("proxy %s: two requests %s apart, min_interval %s", id, d, gap)
			}
		}
	}
	if n != 3*4*4-2 {
		t.Fatalf("checked %d gaps, want %d", n, 3*4*4-2)
	}
}

// dump is every broker key with its content, to prove nothing changed.
func dump(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	ks, err := rdb.Keys(ctx, "crawlq:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch rdb.Type(ctx, k).Val() {
		case "hash":
			out[k] = fmt.Sprint(rdb.HGetAll(ctx, k).Val())
		case "zset":
			out[k] = fmt.Sprint(rdb.ZRangeWithScores(ctx, k, 0, -1).Val())
		default:
			out[k] = rdb.Get(ctx, k).Val()
		}
	}
	return out
}

func TestI3StaleTokenRejected(t *testing.T) {
	ck := &clock{}
	rdb := testredis.Client(t, testredis.DBProxies)
	cfg := ck.config(Config{Default: SiteConfig{MinInterval: 100 * time.Millisecond}})
	slow := NewRedisBroker(rdb, cfg)
	fast := NewRedisBroker(testredis.NewClient(t, testredis.DBProxies), cfg)
	importN(t, slow, 1, ImportOptions{})
	ctx := context.Background()
	old, err := slow.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "slow", Task: "t1", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ck.advance(2 * time.Second) // the slow holder's lease expired
	cur, err := fast.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "fast", Task: "t2", TTL: time.Minute})
	if err != nil {
		t.Fatalf("re-issue after expiry: %v", err)
	}
	if cur.Proxy.ID != old.Proxy.ID || cur.Token <= old.Token {
		t.Fatalf("re-issued lease %d of %s, want a newer token for %s", cur.Token, cur.Proxy.ID, old.Proxy.ID)
	}
	before := dump(t, rdb)
	ops := []struct {
		name string
		op   func() error
	}{
		{"release", func() error { return slow.Release(ctx, old, OK(time.Millisecond)) }},
		{"extend", func() error { _, err := slow.Extend(ctx, old, time.Hour); return err }},
		{"ban", func() error { return slow.Release(ctx, old, Banned("captcha")) }},
		{"fail", func() error { return slow.Release(ctx, old, Failed("timeout")) }},
	}
	for _, tt := range ops {
		if err := tt.op(); !errors.Is(err, ErrStaleLease) {
			t.Errorf("stale %s: err = %v, want ErrStaleLease", tt.name, err)
		}
	}
	if diff := cmp.Diff(before, dump(t, rdb)); diff != "" {
		t.Fatalf("stale operations changed Redis (-before +after):\n%s", diff)
	}
	if _, err := fast.Extend(ctx, cur, time.Minute); err != nil {
		t.Fatalf("live extend: %v", err)
	}
	if err := fast.Release(ctx, cur, OK(time.Millisecond)); err != nil {
		t.Fatalf("live release: %v", err)
	}
}

func TestI4DeadHolderLeaseFreesAfterTTL(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: SiteConfig{MinInterval: 500 * time.Millisecond}}))
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "dead", Task: "t", TTL: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "alive", Task: "t", TTL: time.Minute})
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Exhausted {
		t.Fatalf("while held: err = %v, want *NotReadyError", err)
	}
	if nr.Wait < 30*time.Second || nr.Wait > 31*time.Second {
		t.Errorf("Wait = %s, want ttl + min_interval (30.5s)", nr.Wait)
	}
	ck.advance(nr.Wait)
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "alive", Task: "t", TTL: time.Minute}); err != nil {
		t.Fatalf("after the dead holder's TTL: %v", err)
	}
}

func TestI4QuarantineEndsByItself(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: noGap}))
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, Banned("captcha")); err != nil {
		t.Fatal(err)
	}
	_, err = b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	var nr *NotReadyError
	if !errors.As(err, &nr) || !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("after ban: err = %v, want ErrPoolExhausted", err)
	}
	floor, ceil := DefaultQuarantineBase/10, DefaultQuarantineBase
	if nr.Wait < floor-time.Second || nr.Wait > ceil {
		t.Errorf("quarantine %s, want within [%s, %s]", nr.Wait, floor, ceil)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Sites["wb"]; got.Quarantined != 1 || len(got.Exhausted) != 1 {
		t.Errorf("stats during quarantine = %+v, want 1 quarantined and datacenter exhausted", got)
	}
	ck.advance(nr.Wait)
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); err != nil {
		t.Fatalf("after the quarantine: %v", err)
	}
}

func TestQuarantineGrowsWithRepeatedBans(t *testing.T) {
	ck := &clock{}
	cfg := ck.config(Config{Default: noGap, Rand: func() float64 { return 0.999999 }})
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), cfg)
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	var waits []time.Duration
	for range 6 {
		l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, Banned("403")); err != nil {
			t.Fatal(err)
		}
		_, err = b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		var nr *NotReadyError
		if !errors.As(err, &nr) {
			t.Fatal(err)
		}
		waits = append(waits, nr.Wait.Round(time.Second))
		ck.advance(nr.Wait)
	}
	want := []time.Duration{300 * time.Second, 600 * time.Second, 1200 * time.Second, 2400 * time.Second, 3600 * time.Second, 3600 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("quarantine ceilings (-want +got):\n%s", diff)
	}
}

// TestFailurePenaltyDoublesUntilOK: each failure since the proxy's last ok
// doubles its penalty up to the cap (a dead proxy is tried less and less
// often); an ok resets it (a flaky one comes back soon).
func TestFailurePenaltyDoublesUntilOK(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: noGap}))
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	// release leases and releases the one proxy with o and returns how
	// long until it is ready again
	release := func(o Outcome) time.Duration {
		t.Helper()
		l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, o); err != nil {
			t.Fatal(err)
		}
		again, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err == nil { // ready at once: hand it back, no penalty
			if err := b.Release(ctx, again, Neutral()); err != nil {
				t.Fatal(err)
			}
			return 0
		}
		var nr *NotReadyError
		if !errors.As(err, &nr) {
			t.Fatal(err)
		}
		ck.advance(nr.Wait)
		return nr.Wait.Round(time.Second)
	}
	var waits []time.Duration
	for range 7 {
		waits = append(waits, release(Failed("connect timeout")))
	}
	want := []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second, 240 * time.Second,
		480 * time.Second, 600 * time.Second, 600 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("penalties of failures in a row (-want +got):\n%s", diff)
	}
	if w := release(OK(time.Millisecond)); w != 0 {
		t.Fatalf("after an ok the proxy waits %s, want it ready at once (no min interval)", w)
	}
	if w := release(Failed("connect timeout")); w != 30*time.Second {
		t.Errorf("first failure after an ok: penalty %s, want 30s", w)
	}
}

// TestLatencyEWMAKeepsMicroseconds: an answer faster than a millisecond
// (loopback, a LAN) is not stored as 0; later ones move the average by a
// fifth.
func TestLatencyEWMAKeepsMicroseconds(t *testing.T) {
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: noGap})
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	var got []time.Duration
	for _, lat := range []time.Duration{400 * time.Microsecond, 900 * time.Microsecond} {
		l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, OK(lat)); err != nil {
			t.Fatal(err)
		}
		st, err := b.Stats(ctx)
		if err != nil || len(st.Proxies) != 1 {
			t.Fatalf("stats: %v, %d proxies", err, len(st.Proxies))
		}
		got = append(got, st.Proxies[0].Sites["wb"].EWMALatency.Round(time.Microsecond))
	}
	want := []time.Duration{400 * time.Microsecond, 500 * time.Microsecond} // 400*0.8 + 900*0.2
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latency EWMA (-want +got):\n%s", diff)
	}
}

// TestReleaseInCallersTransaction: a release queued in the caller's
// transaction ends the lease with the caller's own writes; after a SCRIPT
// FLUSH (a restarted Redis) the answer function releases by itself; a
// stale token is refused as by Release. (A private Redis: SCRIPT FLUSH is
// server-wide.)
func TestReleaseInCallersTransaction(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: startRedis(t).addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	b := NewRedisBroker(rdb, Config{Default: noGap})
	importN(t, b, 1, ImportOptions{})
	ctx := context.Background()
	warm, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, warm, Neutral()); err != nil { // loads the script
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		flush bool
	}{
		{name: "script known"},
		{name: "script flushed", flush: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if tc.flush {
				if err := rdb.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var answer func(context.Context) error
			_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "caller:write", tc.name, 0)
				var ok bool
				if answer, ok = b.ReleaseIn(ctx, p, l, OK(time.Millisecond)); !ok {
					t.Fatal("ReleaseIn queued nothing")
				}
				return nil
			})
			if err != nil && !tc.flush { // a flushed script fails its command in EXEC
				t.Fatal(err)
			}
			if err := answer(ctx); err != nil {
				t.Fatalf("answer: %v", err)
			}
			if got := rdb.Get(ctx, "caller:write").Val(); got != tc.name {
				t.Errorf("caller's write = %q, want %q", got, tc.name)
			}
			if err := b.Release(ctx, l, OK(0)); !errors.Is(err, ErrStaleLease) {
				t.Errorf("second release: %v, want ErrStaleLease (the first one ended the lease)", err)
			}
		})
	}
	l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatalf("the proxy is not ready again after the releases: %v", err)
	}
	if err := b.Release(ctx, l, Neutral()); err != nil {
		t.Fatal(err)
	}
	var answer func(context.Context) error
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		answer, _ = b.ReleaseIn(ctx, p, l, OK(0))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := answer(ctx); !errors.Is(err, ErrStaleLease) {
		t.Errorf("stale token in a pipeline: %v, want ErrStaleLease", err)
	}
}

func TestI5BanSeenByOtherServer(t *testing.T) {
	bs := servers(t, 2, Config{Default: noGap})
	ps := importN(t, bs[0], 2, ImportOptions{})
	ctx := context.Background()
	l, err := bs[0].Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "s1", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := bs[0].Release(ctx, l, Banned("captcha")); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		got, err := bs[1].Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "s2", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if got.Proxy.ID == l.Proxy.ID {
			t.Fatalf("server 2 leased proxy %s banned by server 1", got.Proxy.ID)
		}
		if err := bs[1].Release(ctx, got, OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bs[1].LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "s2", Task: "t", TTL: time.Minute}, l.Proxy.ID); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("LeaseProxy of the banned proxy: err = %v, want ErrQuarantined", err)
	}
	if _, err := bs[1].Lease(ctx, LeaseRequest{Site: "ozon", Class: Datacenter, Holder: "s2", Task: "t", TTL: time.Minute}); err != nil {
		t.Fatalf("a ban on wb must not block ozon: %v", err)
	}
	_ = ps
}

func TestPartitionedModeGivesEachProxyOneSite(t *testing.T) {
	sites := map[string]SiteConfig{"wb": noGap, "ozon": noGap, "avito": noGap}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Mode: ModePartitioned, Sites: sites})
	ps := importN(t, b, 12, ImportOptions{})
	ctx := context.Background()
	owner := map[string]string{}
	for site := range sites {
		for {
			l, err := b.Lease(ctx, LeaseRequest{Site: site, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
			if errors.Is(err, ErrNoProxy) || errors.Is(err, ErrPoolEmpty) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if prev, ok := owner[l.Proxy.ID]; ok {
				t.Fatalf("proxy %s served %s and %s", l.Proxy.ID, prev, site)
			}
			owner[l.Proxy.ID] = site
		}
	}
	for _, p := range ps {
		if want := AssignSite(p, []string{"avito", "ozon", "wb"}); owner[p.ID] != want {
			t.Errorf("proxy %s served %q, want its division site %q", p.ID, owner[p.ID], want)
		}
	}
}

func TestLeaseErrors(t *testing.T) {
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: noGap})
	ctx := context.Background()
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrPoolEmpty) {
		t.Fatalf("empty pool: err = %v, want ErrPoolEmpty", err)
	}
	ps := importN(t, b, 1, ImportOptions{Sites: []string{"ozon"}})
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrNotServed) {
		t.Fatalf("proxy limited to ozon leased for wb: err = %v, want ErrNotServed", err)
	}
	if _, err := b.Lease(ctx, LeaseRequest{Site: "ozon", Class: Residential, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrNotServed) {
		t.Fatalf("no residential proxies: err = %v, want ErrNotServed", err)
	}
	l, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h", Task: "t", TTL: time.Minute}, ps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h2", Task: "t2", TTL: time.Minute}, ps[0].ID); !errors.Is(err, ErrBusy) {
		t.Fatalf("LeaseProxy of a leased proxy: err = %v, want ErrBusy", err)
	}
	if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "h", Task: "t", TTL: time.Minute}, "nope"); !errors.Is(err, ErrUnknownProxy) {
		t.Fatalf("LeaseProxy of an unknown proxy: err = %v, want ErrUnknownProxy", err)
	}
	if err := b.Release(ctx, l, Neutral()); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseWaitWaitsForRelease(t *testing.T) {
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: SiteConfig{MinInterval: 30 * time.Millisecond}})
	importN(t, b, 1, ImportOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	l2, err := b.LeaseWait(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if l2.NotBefore.Sub(l.NotBefore) < 30*time.Millisecond {
		t.Fatalf("LeaseWait returned %s after the last use, min_interval 30ms", l2.NotBefore.Sub(l.NotBefore))
	}
	short, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	if _, err := b.LeaseWait(short, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LeaseWait with the only proxy held: err = %v, want deadline exceeded", err)
	}
}

func TestImportRemoveUnbanStats(t *testing.T) {
	ck := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: noGap}))
	ps := importN(t, b, 3, ImportOptions{Class: Residential})
	ctx := context.Background()
	l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Residential, Holder: "srv1", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, Banned("captcha")); err != nil {
		t.Fatal(err)
	}
	l2, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Residential, Holder: "srv2", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := SiteStats{Ready: 1, Leased: 1, Quarantined: 1, ByClass: map[Class]StateCounts{Residential: {Ready: 1, Leased: 1, Quarantined: 1}}}
	if diff := cmp.Diff(want, st.Sites["wb"]); diff != "" {
		t.Errorf("site stats (-want +got):\n%s", diff)
	}
	for _, p := range st.Proxies {
		s := p.Sites["wb"]
		if p.ID == l.Proxy.ID && (s.Banned != 1 || s.LastBan != "captcha" || s.LeasesByHolder["srv1"] != 1) {
			t.Errorf("banned proxy stats = %+v", s)
		}
		if p.ID == l2.Proxy.ID && s.Holder != "srv2" {
			t.Errorf("leased proxy holder = %q, want srv2", s.Holder)
		}
	}
	if n, err := b.Unban(ctx, l.Proxy.ID); err != nil || n != 1 {
		t.Fatalf("Unban = %d, %v; want 1", n, err)
	}
	if _, err := b.LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "h", Task: "t", TTL: time.Minute}, l.Proxy.ID); err != nil {
		t.Fatalf("lease after unban: %v", err)
	}
	if n, err := b.Remove(ctx, ps[0].ID, ps[1].ID, ps[2].ID); err != nil || n != 3 {
		t.Fatalf("Remove = %d, %v; want 3", n, err)
	}
	if _, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Residential, Holder: "h", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrPoolEmpty) {
		t.Fatalf("after removing all: err = %v, want ErrPoolEmpty", err)
	}
	if err := b.Release(ctx, l2, OK(time.Millisecond)); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("release of a removed proxy's lease: err = %v, want ErrStaleLease", err)
	}
}

func TestImportBadLineLeavesPoolUnchanged(t *testing.T) {
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{})
	importN(t, b, 2, ImportOptions{})
	ctx := context.Background()
	before, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(writeFile(t, "1.1.1.1:80\nu:p@2.2.2.2:81\nnot a proxy\n3.3.3.3:80\n"))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 {
		t.Fatalf("err = %v, want a *LineError on line 3", err)
	}
	after, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("pool changed (-before +after):\n%s", diff)
	}
}

func writeFile(t *testing.T, s string) string {
	p := t.TempDir() + "/proxies.txt"
	if err := osWriteFile(p, s); err != nil {
		t.Fatal(err)
	}
	return p
}

func BenchmarkLeaseRelease(b *testing.B) {
	br := NewRedisBroker(testredis.Client(b, testredis.DBProxies), Config{Default: noGap})
	importN(b, br, 1000, ImportOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l, err := br.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if err := br.Release(ctx, l, OK(time.Millisecond)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestI2ReadyAtNotBeforeReleasePlusInterval: Redis TIME has microseconds
// but the scripts count milliseconds, so the release must round up: the
// proxy's ready-at is min_interval after the real moment of the release
// (read here as a TIME in microseconds taken just before it), never after
// its millisecond floor. 50 releases make a same-millisecond pair certain.
func TestI2ReadyAtNotBeforeReleasePlusInterval(t *testing.T) {
	const mi = 200 * time.Millisecond
	b := servers(t, 1, Config{Default: SiteConfig{MinInterval: mi}})[0]
	importN(t, b, 50, ImportOptions{})
	ctx := context.Background()
	var ls []*Lease
	for range 50 {
		l, err := b.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "s1", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	for _, l := range ls {
		before, err := b.rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		score, err := b.rdb.ZScore(ctx, b.k.ready("wb", Datacenter), l.Proxy.ID).Result()
		if err != nil {
			t.Fatal(err)
		}
		earliest := float64(before.UnixMicro())/1000 + float64(mi.Milliseconds())
		if score < earliest {
			t.Fatalf("proxy %s ready at %.0f ms, %.3f ms before its release + min_interval (%.3f)", l.Proxy.ID, score, earliest-score, earliest)
		}
	}
}

// TestLeaseProxyAfterItsClassChanged: LeaseProxy takes the proxy's class
// from the specs the broker loaded; when a re-import changed it since,
// the named proxy is still leased, in its new class, and a proxy removed
// since is unknown.
func TestLeaseProxyAfterItsClassChanged(t *testing.T) {
	ctx := context.Background()
	var ck clock
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), ck.config(Config{Default: noGap}))
	ps := importN(t, b, 2, ImportOptions{})
	req := LeaseRequest{Site: "wb", Holder: "h", Task: "t", TTL: time.Minute}
	l, err := b.LeaseProxy(ctx, req, ps[0].ID) // loads the specs: datacenter
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps[:1], ImportOptions{Class: Residential, Update: true}); err != nil {
		t.Fatal(err)
	}
	if l, err = b.LeaseProxy(ctx, req, ps[0].ID); err != nil || l.Proxy.Class != Residential {
		t.Fatalf("lease proxy after its class changed: %+v, %v; want it as residential", l, err)
	}
	if _, err := b.Remove(ctx, ps[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LeaseProxy(ctx, req, ps[1].ID); !errors.Is(err, ErrUnknownProxy) {
		t.Fatalf("lease proxy after its removal: %v, want ErrUnknownProxy", err)
	}
}
