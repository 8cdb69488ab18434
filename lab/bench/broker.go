package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/backoff"
	"crawlq/internal/redisx"
	"crawlq/lab/bench/naive"
	"crawlq/proxies"
)

// BrokerOptions configure RunBroker.
type BrokerOptions struct {
	// Proxies in the benchmark pool. Default 10000.
	Proxies int
	// Workers is the number of goroutines of every phase. Default 64.
	Workers int
	// Duration of every phase. Default 3s.
	Duration time.Duration
	// Pipelines is crawlq's proxies.Config.Pipelines: 0 the broker's
	// default (concurrent scripts share round trips), -1 one round trip
	// per script.
	Pipelines int
	// Replicas and Epochs are crawlq's proxies.Config failover guards
	// (WAIT for replicas after each round trip; replication-ID epochs).
	Replicas int
	Epochs   bool
}

// Rate is one phase's throughput.
type Rate struct {
	CyclesPerS float64 `json:"cycles_per_s"`
	Cycles     int64   `json:"cycles"`
	// Misses are leases that found nothing free (naive: none of its 20
	// candidates; crawlq: not ready).
	Misses int64   `json:"misses,omitempty"`
	secs   float64 // counted time
}

// BrokerResult is the output of `crawlq bench broker`.
type BrokerResult struct {
	Proxies int  `json:"proxies"`
	Workers int  `json:"workers"`
	Crawlq  Rate `json:"crawlq"`
	Naive   Rate `json:"naive"`
	Floor   Rate `json:"floor"`
	// DoubleLeases counts overlapping leases of one (proxy, site) seen by
	// the in-process tracker across all phases.
	DoubleLeases int64 `json:"double_leases"`
}

const (
	benchPool  = "bench"
	benchSite  = "bench"
	naiveKeys  = "crawlq:bench:naive:"
	benchTTL   = 30 * time.Second
	defaultN   = 10000
	defaultW   = 64
	defaultDur = 3 * time.Second
)

func (o BrokerOptions) withDefaults() BrokerOptions {
	if o.Proxies <= 0 {
		o.Proxies = defaultN
	}
	if o.Workers <= 0 {
		o.Workers = defaultW
	}
	if o.Duration <= 0 {
		o.Duration = defaultDur
	}
	return o
}

// RunBroker measures lease+release cycles per second of crawlq's broker, the
// naive article broker and two PINGs (the round-trip floor) on the same
// Redis, through one client whose pool has a connection per worker, with
// its own keys (crawlq:{bench}:…, crawlq:bench:naive:…), removed
// afterwards. The phases take turns in up to three rounds, each slice
// after an uncounted warm-up, so every phase gets o.Duration of counted
// time under the same background load.
func RunBroker(ctx context.Context, target *redisx.Target, o BrokerOptions) (*BrokerResult, error) {
	o = o.withDefaults()
	t := *target
	t.PoolSize = o.Workers + 4
	c := t.NewClient()
	defer c.Close()
	defer cleanup(context.WithoutCancel(ctx), c)
	if err := cleanup(ctx, c); err != nil {
		return nil, err
	}
	ps := benchProxies(o.Proxies)
	tr := &tracker{}
	crawlq, err := crawlqCycle(ctx, c, ps, tr, proxies.Config{Pool: benchPool, Pipelines: o.Pipelines,
		Replicas: o.Replicas, Epochs: o.Epochs, Default: proxies.SiteConfig{MinInterval: proxies.NoMinInterval}})
	if err != nil {
		return nil, fmt.Errorf("crawlq setup: %w", err)
	}
	naive, err := naiveCycle(ctx, c, ps, tr)
	if err != nil {
		return nil, fmt.Errorf("naive setup: %w", err)
	}
	phases := []brokerPhase{{"crawlq", crawlq, new(Rate)}, {"naive", naive, new(Rate)}, {"floor", floorCycle(c), new(Rate)}}
	if err := runRounds(ctx, o, phases); err != nil {
		return nil, err
	}
	res := &BrokerResult{Proxies: o.Proxies, Workers: o.Workers,
		Crawlq: phases[0].rate.done(), Naive: phases[1].rate.done(), Floor: phases[2].rate.done()}
	res.DoubleLeases = tr.doubles.Load()
	return res, nil
}

// brokerPhase is one phase of the broker bench and its rate so far.
type brokerPhase struct {
	name  string
	cycle cycleFunc
	rate  *Rate
}

// runRounds measures the phases taking turns in rounds, so a load change
// on a shared machine hits all three alike; each gets o.Duration in all.
func runRounds(ctx context.Context, o BrokerOptions, phases []brokerPhase) error {
	rounds := max(1, min(3, int(o.Duration/time.Second)))
	for r := range rounds {
		slice := o.Duration / time.Duration(rounds)
		if r == rounds-1 {
			slice = o.Duration - slice*time.Duration(rounds-1)
		}
		for _, ph := range phases {
			if err := measure(ctx, o.Workers, slice, ph.cycle, ph.rate); err != nil {
				return fmt.Errorf("%s phase: %w", ph.name, err)
			}
		}
	}
	return nil
}

// cycleFunc is one lease+release cycle (two PINGs for the floor); false
// when nothing was free.
type cycleFunc func(context.Context) (bool, error)

// benchProxies are n distinct fake proxies on loopback (never dialled).
func benchProxies(n int) []proxies.Proxy {
	ps := make([]proxies.Proxy, n)
	for i := range ps {
		p, _ := proxies.ParseLine(fmt.Sprintf("http://u%d:pw@127.%d.%d.%d:8080", i, i>>16&255, i>>8&255, i&255))
		ps[i] = p
	}
	return ps
}

// crawlqCycle imports ps into crawlq's broker, syncs its ready set and
// returns its cycle.
func crawlqCycle(ctx context.Context, c redis.UniversalClient, ps []proxies.Proxy, tr *tracker, cfg proxies.Config) (cycleFunc, error) {
	b := proxies.NewRedisBroker(c, cfg)
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{}); err != nil {
		return nil, err
	}
	l, err := b.Lease(ctx, proxies.LeaseRequest{Site: benchSite, Class: proxies.Datacenter, Holder: "warmup", Task: "", TTL: benchTTL}) // syncs the ready set
	if err != nil {
		return nil, err
	}
	if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, error) {
		l, err := b.Lease(ctx, proxies.LeaseRequest{Site: benchSite, Class: proxies.Datacenter, Holder: "bench", Task: "", TTL: benchTTL})
		if errors.Is(err, proxies.ErrNoProxy) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		tr.take(l.Proxy.ID)
		tr.give(l.Proxy.ID)
		return true, b.Release(ctx, l, proxies.OK(time.Millisecond))
	}, nil
}

// naiveCycle loads ps into the naive broker and returns its cycle.
func naiveCycle(ctx context.Context, c redis.UniversalClient, ps []proxies.Proxy, tr *tracker) (cycleFunc, error) {
	nb := naive.New(c, naiveKeys)
	addrs := make([]string, len(ps))
	for i, p := range ps {
		addrs[i] = p.Host + ":" + p.Port + ":" + p.User
	}
	if err := nb.Load(ctx, addrs); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, error) {
		p, err := nb.Get(ctx, "bench")
		if err != nil || p == "" {
			return false, err
		}
		tr.take(p)
		tr.give(p)
		return true, nb.Release(ctx, p)
	}, nil
}

// floorCycle is two PINGs: the round trips of a cycle with no work.
func floorCycle(c redis.UniversalClient) cycleFunc {
	return func(ctx context.Context) (bool, error) {
		if err := c.Ping(ctx).Err(); err != nil {
			return false, err
		}
		return true, c.Ping(ctx).Err()
	}
}

// Every slice runs uncounted for at least warmup, and until as many cycles
// as workers ended (at most maxWarmup), so connections are dialled and a
// slow phase (naive at 100,000 proxies needs seconds per cycle) is counted
// in its steady state rather than while its first cycles are in flight.
const (
	warmup    = 100 * time.Millisecond
	maxWarmup = 10 * time.Second
)

// measure runs cycle from workers goroutines through the warm-up, then
// counts the cycles that end in the next d into r.
func measure(ctx context.Context, workers int, d time.Duration, cycle cycleFunc, r *Rate) error {
	var done, misses, ended atomic.Int64
	var counting atomic.Bool
	var firstErr error
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ok, err := cycle(ctx)
				ended.Add(1)
				switch {
				case err != nil:
					once.Do(func() { firstErr = err; close(stop) })
					return
				case !counting.Load():
				case ok:
					done.Add(1)
				default:
					misses.Add(1)
				}
			}
		})
	}
	r.secs += countWindow(ctx, workers, d, &ended, &counting)
	once.Do(func() { close(stop) })
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	r.Cycles += done.Load()
	r.Misses += misses.Load()
	return firstErr
}

// countWindow waits out the warm-up (until every worker ended a cycle, at
// most maxWarmup), then sets counting for d and returns the seconds it
// was set.
func countWindow(ctx context.Context, workers int, d time.Duration, ended *atomic.Int64, counting *atomic.Bool) float64 {
	_ = backoff.Sleep(ctx, warmup)
	for t0 := time.Now(); ended.Load() < int64(workers) && time.Since(t0) < maxWarmup && ctx.Err() == nil; {
		_ = backoff.Sleep(ctx, 10*time.Millisecond)
	}
	counting.Store(true)
	start := time.Now()
	_ = backoff.Sleep(ctx, d)
	counting.Store(false)
	return time.Since(start).Seconds()
}

// done fills CyclesPerS from the counted cycles and time.
func (r *Rate) done() Rate {
	if r.secs > 0 {
		r.CyclesPerS = float64(r.Cycles) / r.secs
	}
	return *r
}

// tracker counts overlapping leases of one (proxy, site) in this process.
// A cycle takes the proxy after its lease returned and gives it back before
// it sends the release, so the tracked span lies inside the span the broker
// holds the lease: a second take of a key not yet given back is a lease the
// broker granted twice.
type tracker struct {
	live    sync.Map // key -> *atomic.Int32
	doubles atomic.Int64
}

// take marks key held; a key already held counts as a double lease.
func (t *tracker) take(key string) {
	v, _ := t.live.LoadOrStore(key, new(atomic.Int32))
	if v.(*atomic.Int32).Add(1) > 1 {
		t.doubles.Add(1)
	}
}

// give unmarks key.
func (t *tracker) give(key string) {
	if v, ok := t.live.Load(key); ok {
		v.(*atomic.Int32).Add(-1)
	}
}

// cleanup deletes every benchmark key.
func cleanup(ctx context.Context, c redis.UniversalClient) error {
	for _, pattern := range []string{"crawlq:{" + benchPool + "}:*", naiveKeys + "*"} {
		if err := unlinkAll(ctx, c, pattern); err != nil {
			return err
		}
	}
	return nil
}
