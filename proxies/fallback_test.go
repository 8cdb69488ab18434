package proxies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
)

// redisProc is a private redis-server the test stops and restarts, with AOF
// so a restart keeps the pool.
type redisProc struct {
	t    *testing.T
	port string
	dir  string
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisProc {
	t.Helper()
	port, err := testredis.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &redisProc{t: t, port: strconv.Itoa(port), dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisProc) addr() string { return "127.0.0.1:" + r.port }

func (r *redisProc) start() {
	r.t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		r.t.Fatalf("the fallback tests stop and restart their own redis-server: %v", err)
	}
	r.cmd = exec.Command(bin, "--port", r.port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	defer c.Close()
	waitFor(r.t, "redis-server answers", func() bool { return c.Ping(context.Background()).Err() == nil })
}

func (r *redisProc) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	_ = r.cmd.Wait()
	r.cmd = nil
}

// wipe deletes the stored data, so the next start has lost the pool.
func (r *redisProc) wipe() {
	if err := os.RemoveAll(filepath.Join(r.dir, "appendonlydir")); err != nil {
		r.t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wallClock is a settable local clock shared by a test's servers.
type wallClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *wallClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *wallClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const fbMinInterval = time.Minute

var fbServers = []string{"a", "b", "c"}

// fbCluster is three servers with FallbackBrokers on one private Redis.
type fbCluster struct {
	redis    *redisProc
	clk      *wallClock
	fb       map[string]*FallbackBroker
	primary  map[string]*RedisBroker
	pool     []Proxy
	down, up map[string]*atomic.Int32 // OnFallback(true) and (false) calls
}

func newFBCluster(t *testing.T, nproxies int) *fbCluster {
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	c := &fbCluster{redis: startRedis(t), clk: &wallClock{t: time.Now()}, fb: map[string]*FallbackBroker{},
		primary: map[string]*RedisBroker{}, down: map[string]*atomic.Int32{}, up: map[string]*atomic.Int32{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, id := range fbServers {
		c.addServer(t, ctx, &wg, id)
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	c.pool = c.importPool(t, nproxies)
	waitFor(t, "every server knows the three servers and the pool", c.snapshotsTaken)
	return c
}

func (c *fbCluster) addServer(t *testing.T, ctx context.Context, wg *sync.WaitGroup, id string) {
	rdb := redis.NewClient(&redis.Options{Addr: c.redis.addr(), MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	c.primary[id] = NewRedisBroker(rdb, Config{Default: SiteConfig{MinInterval: fbMinInterval}})
	down, up := &atomic.Int32{}, &atomic.Int32{}
	c.down[id], c.up[id] = down, up
	fb := NewFallbackBroker(c.primary[id], FallbackConfig{
		Logger: masktest.Logger(t), ServerID: id, Heartbeat: 10 * time.Millisecond, PoolRefresh: 10 * time.Millisecond,
		ProbeInterval: 10 * time.Millisecond, Grace: time.Millisecond, Clock: c.clk.now,
		OnFallback: func(active bool) {
			if active {
				down.Add(1)
			} else {
				up.Add(1)
			}
		},
	})
	c.fb[id] = fb
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = fb.Run(ctx)
	}()
}

func (c *fbCluster) importPool(t *testing.T, n int) []Proxy {
	ps := make([]Proxy, n)
	for i := range ps {
		ps[i] = Proxy{Scheme: "http", Host: "127.0.0.1", Port: strconv.Itoa(20000 + i), User: "u", Password: "secret"}
	}
	ctx := context.Background()
	if _, err := c.primary["a"].Import(ctx, ps, ImportOptions{Class: Datacenter}); err != nil {
		t.Fatal(err)
	}
	pool, err := c.primary["a"].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

func (c *fbCluster) snapshotsTaken() bool {
	for _, fb := range c.fb {
		st := fb.Status()
		if st.Pool != len(c.pool) || !cmp.Equal(st.Servers, fbServers) {
			return false
		}
	}
	return true
}

// owners is the expected fallback shard of every server.
func (c *fbCluster) owners() map[string][]string {
	out := map[string][]string{}
	for owner, ps := range Shard(c.pool, NewRing(fbServers, 0)) {
		for _, p := range ps {
			out[owner] = append(out[owner], p.ID)
		}
		sort.Strings(out[owner])
	}
	return out
}

// leaseAll leases site on server id until its shard is all leased.
func (c *fbCluster) leaseAll(t *testing.T, id, site string) []*Lease {
	t.Helper()
	var out []*Lease
	for i := 0; ; i++ {
		l, err := c.fb[id].Lease(context.Background(), LeaseRequest{Site: site, Class: Datacenter, Holder: id, Task: fmt.Sprintf("%s-task-%d", id, i), TTL: time.Hour})
		var nr *NotReadyError
		if errors.As(err, &nr) {
			return out
		}
		if err != nil {
			t.Fatalf("server %s lease %d in fallback: %v", id, i, err)
		}
		out = append(out, l)
	}
}

func leaseIDs(ls []*Lease) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Proxy.ID)
	}
	sort.Strings(out)
	return out
}

// TestFallbackShardsDisjointWhileRedisDown: with the broker's Redis down,
// every server leases only its own consistent-hash shard; the shards are
// disjoint and cover the pool, and local leases are fenced and paced per
// (proxy, site) by min_interval.
func TestFallbackShardsDisjointWhileRedisDown(t *testing.T) {
	c := newFBCluster(t, 30)
	c.redis.stop()
	c.waitDown(t)
	got := map[string][]string{}
	leases := map[string][]*Lease{}
	for _, id := range fbServers {
		leases[id] = c.leaseAll(t, id, "wb")
		got[id] = leaseIDs(leases[id])
		// a Redis shutting down may answer between dropped connections, so
		// a server can switch more than once on the way down
		if st := c.fb[id].Status(); !st.Fallback || st.Switches < 1 || int64(c.down[id].Load()) != st.Switches {
			t.Fatalf("server %s: status %+v, OnFallback(true) %d times; want fallback, one call per switch", id, st, c.down[id].Load())
		}
	}
	want := c.owners()
	if len(want) != 3 {
		t.Fatalf("ring gave %d non-empty shards of 30 proxies, want 3", len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("proxies leased per server in fallback (-shard +leased):\n%s", d)
	}
	seen := map[string]string{}
	for id, ids := range got {
		for _, p := range ids {
			if other, dup := seen[p]; dup {
				t.Fatalf("proxy %s leased by servers %s and %s", p, other, id)
			}
			seen[p] = id
		}
	}
	if len(seen) != len(c.pool) {
		t.Fatalf("fallback shards cover %d of %d proxies", len(seen), len(c.pool))
	}
	checkCrossShard(t, c, want)
	checkLocalPacing(t, c, leases["a"][0])
}

// checkCrossShard: another server's proxy is ErrBusy in fallback.
func checkCrossShard(t *testing.T, c *fbCluster, owners map[string][]string) {
	t.Helper()
	_, err := c.fb["a"].LeaseProxy(context.Background(), LeaseRequest{Site: "ozon", Holder: "a", Task: "t", TTL: time.Minute}, owners["b"][0])
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("server a leasing server b's proxy in fallback: %v, want ErrBusy", err)
	}
}

// checkLocalPacing: a released local lease frees its proxy for the site
// only min_interval later; the token fences stale calls.
func checkLocalPacing(t *testing.T, c *fbCluster, l *Lease) {
	t.Helper()
	ctx, fb := context.Background(), c.fb["a"]
	if l.Token >= 0 || l.MinInterval != fbMinInterval {
		t.Fatalf("local lease token %d, min interval %s; want a negative token and %s", l.Token, l.MinInterval, fbMinInterval)
	}
	if _, err := fb.Extend(ctx, l, time.Hour); err != nil {
		t.Fatalf("extend local lease: %v", err)
	}
	if err := fb.Release(ctx, l, OK(time.Millisecond)); err != nil {
		t.Fatalf("release local lease: %v", err)
	}
	if err := fb.Release(ctx, l, OK(time.Millisecond)); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("second release: %v, want ErrStaleLease", err)
	}
	_, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "next", TTL: time.Hour})
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Wait != fbMinInterval {
		t.Fatalf("lease right after release: %v, want NotReadyError waiting %s", err, fbMinInterval)
	}
	c.clk.advance(fbMinInterval - time.Millisecond)
	if _, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "next", TTL: time.Hour}); !errors.Is(err, ErrNoProxy) {
		t.Fatalf("lease 1ms before min_interval: %v, want ErrNoProxy", err)
	}
	c.clk.advance(time.Millisecond)
	nl, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "next", TTL: time.Hour})
	if err != nil || nl.Proxy.ID != l.Proxy.ID || nl.Token >= l.Token {
		t.Fatalf("lease after min_interval: %+v, %v; want proxy %s with a newer local token", nl, err, l.Proxy.ID)
	}
}

// TestFallbackReturnsAndRegistersLeases: when Redis answers again every
// server returns to the broker; its open local leases are registered for
// the same holder and task, an adopted broker lease is taken over, and a
// proxy used locally is paced by the broker too.
func TestFallbackReturnsAndRegistersLeases(t *testing.T) {
	c := newFBCluster(t, 30)
	ctx, owners := context.Background(), c.owners()
	adopted, err := c.fb["a"].LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "a", Task: "adopt", TTL: time.Hour}, owners["a"][0])
	if err != nil {
		t.Fatal(err)
	}
	lost, err := c.fb["a"].LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "a", Task: "lost", TTL: time.Hour}, owners["b"][0])
	if err != nil {
		t.Fatal(err)
	}
	c.redis.stop()
	if _, err := c.fb["a"].Extend(ctx, adopted, time.Hour); err != nil {
		t.Fatalf("extend a broker lease of the own shard in fallback: %v", err)
	}
	if _, err := c.fb["a"].Extend(ctx, lost, time.Hour); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("extend a broker lease of another shard in fallback: %v, want ErrStaleLease", err)
	}
	c.waitDown(t)
	open, cooled := map[string]*Lease{}, map[string]*Lease{}
	for _, id := range fbServers {
		open[id], cooled[id] = leaseTwo(t, c, id)
	}
	c.redis.start()
	waitFor(t, "every server is back on the broker", func() bool { return c.allUp() })
	for _, id := range fbServers {
		checkRegistered(t, c, id, open[id], "wb")
		checkBrokerPaces(t, c, cooled[id])
	}
	nl := checkRegistered(t, c, "a", adopted, "ozon")
	if nl.Token == adopted.Token {
		t.Fatalf("adopted lease kept token %d after the return; want a takeover's new token", nl.Token)
	}
}

// leaseTwo leases two proxies locally on server id and releases the second.
func leaseTwo(t *testing.T, c *fbCluster, id string) (open, released *Lease) {
	t.Helper()
	ctx := context.Background()
	var ls [2]*Lease
	for i := range ls {
		l, err := c.fb[id].Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: id, Task: fmt.Sprintf("%s-%d", id, i), TTL: time.Hour})
		if err != nil || l.Token >= 0 {
			t.Fatalf("server %s fallback lease: %+v, %v", id, l, err)
		}
		ls[i] = l
	}
	if err := c.fb[id].Release(ctx, ls[1], OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return ls[0], ls[1]
}

// waitDown waits until every server is in fallback, then moves the clock
// past the grace.
func (c *fbCluster) waitDown(t *testing.T) {
	t.Helper()
	waitFor(t, "every server is in fallback and told OnFallback", func() bool {
		for id, fb := range c.fb {
			if st := fb.Status(); !st.Fallback || int64(c.down[id].Load()) != st.Switches {
				return false
			}
		}
		return true
	})
	c.clk.advance(time.Second)
}

func (c *fbCluster) allUp() bool {
	for id, fb := range c.fb {
		if fb.Status().Fallback || c.up[id].Load() != c.down[id].Load() {
			return false
		}
	}
	return true
}

// checkRegistered: the session's next Extend of its fallback lease goes to
// the broker lease registered for it, which the broker shows held by id.
func checkRegistered(t *testing.T, c *fbCluster, id string, l *Lease, site string) *Lease {
	t.Helper()
	ctx := context.Background()
	nl, err := c.fb[id].Extend(ctx, l, time.Hour)
	if err != nil || nl.Token <= 0 || nl.Holder != id || nl.Task != l.Task || nl.Proxy.ID != l.Proxy.ID {
		t.Fatalf("server %s extend of its fallback lease after the return: %+v, %v; want the registered broker lease", id, nl, err)
	}
	st, err := c.primary[id].Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Proxies {
		if p.ID == l.Proxy.ID {
			if ps := p.Sites[site]; ps.State != "leased" || ps.Holder != id {
				t.Fatalf("broker shows proxy %s on %s as %s by %q, want leased by %s", p.ID, site, ps.State, ps.Holder, id)
			}
			return nl
		}
	}
	t.Fatalf("proxy %s missing from the broker's stats", l.Proxy.ID)
	return nil
}

// checkBrokerPaces: a proxy used in fallback is cooling on the broker, so
// no server sends through it before min_interval (I2 across the return).
func checkBrokerPaces(t *testing.T, c *fbCluster, l *Lease) {
	t.Helper()
	_, err := c.primary["c"].LeaseProxy(context.Background(), LeaseRequest{Site: "wb", Holder: "c", Task: "someone-else", TTL: time.Minute}, l.Proxy.ID)
	var nr *NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("broker lease of proxy %s used in fallback just before: %v, want NotReadyError", l.Proxy.ID, err)
	}
}

// TestFallbackEndsLeasesTheBrokerRefuses: Redis comes back without its data;
// the fallback leases cannot be registered, so they are Ended (a session
// asks before each request), their next Extend is ErrStaleLease and the
// session retires, and leasing says the pool is gone.
func TestFallbackEndsLeasesTheBrokerRefuses(t *testing.T) {
	c := newFBCluster(t, 12)
	c.redis.stop()
	c.waitDown(t)
	open, _ := leaseTwo(t, c, "a")
	if c.fb["a"].Ended(open) {
		t.Fatal("a fallback lease is ended while in fallback")
	}
	c.redis.wipe()
	c.redis.start()
	waitFor(t, "server a is back on the broker", func() bool { return !c.fb["a"].Status().Fallback })
	if !c.fb["a"].Ended(open) {
		t.Fatal("the unregistered fallback lease is not Ended: its session would send again before its next Extend")
	}
	ctx := context.Background()
	if _, err := c.fb["a"].Extend(ctx, open, time.Hour); !errors.Is(err, ErrStaleLease) {
		t.Fatalf("extend of an unregistered fallback lease: %v, want ErrStaleLease", err)
	}
	if _, err := c.fb["a"].Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "t", TTL: time.Minute}); !errors.Is(err, ErrPoolEmpty) {
		t.Fatalf("lease after Redis lost the pool: %v, want ErrPoolEmpty", err)
	}
}

// TestBrokerErrorDoesNotTriggerFallback: broker answers that are errors
// (nothing ready, stale token, unknown or busy proxy, bad arguments) are
// returned as they are; only Redis not answering switches to fallback.
func TestBrokerErrorDoesNotTriggerFallback(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBProxies)
	b := NewRedisBroker(rdb, Config{Default: SiteConfig{MinInterval: time.Minute}})
	var switched atomic.Int32
	fb := NewFallbackBroker(b, FallbackConfig{ServerID: "a", OnFallback: func(bool) { switched.Add(1) }})
	ctx := context.Background()
	if _, err := b.Import(ctx, []Proxy{{Scheme: "http", Host: "127.0.0.1", Port: "3128"}}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := fb.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	held, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "t1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	stale := *held
	stale.Token++
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"nothing ready", func() error {
			_, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "t2", TTL: time.Minute})
			return err
		}, ErrNoProxy},
		{"stale release", func() error { return fb.Release(ctx, &stale, OK(0)) }, ErrStaleLease},
		{"stale extend", func() error { _, err := fb.Extend(ctx, &stale, time.Minute); return err }, ErrStaleLease},
		{"unknown proxy", func() error {
			_, err := fb.LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "a", Task: "t2", TTL: time.Minute}, "nope")
			return err
		}, ErrUnknownProxy},
		{"busy proxy", func() error {
			_, err := fb.LeaseProxy(ctx, LeaseRequest{Site: "wb", Holder: "a", Task: "t2", TTL: time.Minute}, held.Proxy.ID)
			return err
		}, ErrBusy},
		{"bad class", func() error {
			_, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: "laser", Holder: "a", Task: "t2", TTL: time.Minute})
			return err
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ce *ConfigError
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || (tc.want == nil && !errors.As(err, &ce)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if fb.Status().Fallback || switched.Load() != 0 {
				t.Fatalf("broker error %v switched to fallback", err)
			}
		})
	}
}

// TestIsUnavailable: which errors mean Redis did not answer.
func TestIsUnavailable(t *testing.T) {
	_, refused := net.Dial("tcp", "127.0.0.1:1")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("lease: %w", refused), true},
		{"connection dropped", io.EOF, true},
		{"pool timeout", redis.ErrPoolTimeout, true},
		{"loading", errors.New("LOADING Redis is loading the dataset in memory"), true},
		{"no proxy", &NotReadyError{Site: "wb", Class: Datacenter}, false},
		{"stale", ErrStaleLease, false},
		{"caller cancelled", context.Canceled, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsUnavailable(tc.err); got != tc.want {
				t.Fatalf("IsUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestFallbackReturnWindowKeepsToOwnShard: right after the return, while
// other servers may still be in fallback on their shards, a server leases
// only from its own fallback shard and refuses to resume a proxy of
// another shard; after the window it may again.
func TestFallbackReturnWindowKeepsToOwnShard(t *testing.T) {
	c := newFBCluster(t, 30)
	ctx, owners := context.Background(), c.owners()
	c.redis.stop()
	c.waitDown(t)
	c.redis.start()
	waitFor(t, "every server is back on the broker", func() bool { return c.allUp() })
	got := leaseIDs(c.leaseAll(t, "a", "wb"))
	if diff := cmp.Diff(owners["a"], got); diff != "" {
		t.Fatalf("leases in the return window outside a's shard (-shard +leased):\n%s", diff)
	}
	other := owners["b"][0]
	if _, err := c.fb["a"].LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "a", Task: "sticky", TTL: time.Minute}, other); !errors.Is(err, ErrBusy) {
		t.Fatalf("resume of b's proxy in the return window: %v, want ErrBusy", err)
	}
	c.clk.advance(c.fb["a"].returnWindow())
	if _, err := c.fb["a"].LeaseProxy(ctx, LeaseRequest{Site: "ozon", Holder: "a", Task: "sticky", TTL: time.Minute}, other); err != nil {
		t.Fatalf("resume of b's proxy after the return window: %v", err)
	}
}

// TestFallbackReleaseIn: while the broker's Redis answers, a release rides
// in the caller's transaction on it; in fallback nothing is queued and the
// caller releases as usual.
func TestFallbackReleaseIn(t *testing.T) {
	c := newFBCluster(t, 3)
	ctx := context.Background()
	fb, rdb := c.fb["a"], c.primary["a"].Redis()
	if fb.Redis() != rdb {
		t.Fatal("Redis() is not the broker's client")
	}
	l, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "task-1", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var answer func(context.Context) error
	var ok bool
	// (this fresh Redis does not know the release script yet: its command
	// fails in the transaction and the answer releases by itself)
	_, _ = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		answer, ok = fb.ReleaseIn(ctx, p, l, OK(time.Millisecond))
		return nil
	})
	if !ok {
		t.Fatal("up: ReleaseIn queued nothing")
	}
	if err := answer(ctx); err != nil {
		t.Fatalf("up: answer %v", err)
	}
	if err := fb.Release(ctx, l, OK(0)); !errors.Is(err, ErrStaleLease) {
		t.Errorf("release after ReleaseIn: %v, want ErrStaleLease", err)
	}
	l2, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "task-2", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.redis.stop()
	waitFor(t, "server a is in fallback", func() bool { return fb.Status().Fallback })
	p := rdb.TxPipeline()
	if _, ok := fb.ReleaseIn(ctx, p, l2, OK(0)); ok || p.Len() != 0 {
		t.Errorf("in fallback: ReleaseIn ok %v with %d commands queued, want nothing queued", ok, p.Len())
	}
	if err := fb.Release(ctx, l2, OK(0)); err != nil {
		t.Errorf("release in fallback: %v", err)
	}
}

// TestFallbackKeepsQuarantines: a proxy the broker had quarantined on a
// site before the outage is not leased on that site from the fallback
// shard until its quarantine ends; the rest of the shard, and the proxy on
// other sites, are.
func TestFallbackKeepsQuarantines(t *testing.T) {
	c := newFBCluster(t, 12)
	ctx := context.Background()
	l, err := c.fb["a"].Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "task-ban", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.fb["a"].Release(ctx, l, Banned("captcha")); err != nil {
		t.Fatal(err)
	}
	for id, fb := range c.fb {
		if err := fb.Refresh(ctx); err != nil {
			t.Fatalf("server %s refresh: %v", id, err)
		}
	}
	banned := l.Proxy.ID
	var owner string
	for id, ids := range c.owners() {
		if slices.Contains(ids, banned) {
			owner = id
		}
	}
	c.redis.stop()
	c.waitDown(t)
	got := leaseIDs(c.leaseAll(t, owner, "wb"))
	want := slices.DeleteFunc(slices.Clone(c.owners()[owner]), func(id string) bool { return id == banned })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server %s leased on wb in fallback (-want +got):\n%s", owner, diff)
	}
	if oz := leaseIDs(c.leaseAll(t, owner, "oz")); !slices.Contains(oz, banned) {
		t.Errorf("on another site the proxy is not quarantined, yet server %s did not lease it: %v", owner, oz)
	}
}
