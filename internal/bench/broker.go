package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/bench/naive"
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
}

// Rate is one phase's throughput.
type Rate struct {
	CyclesPerS float64 `json:"cycles_per_s"`
	Cycles     int64   `json:"cycles"`
	// Misses are leases that found nothing free (naive: none of its 20
	// candidates; crawlq: not ready).
	Misses int64 `json:"misses,omitempty"`
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
// naive article broker and two PINGs (the round-trip floor), one phase after
// the other on the same Redis, with its own keys (crawlq:{bench}:…,
// crawlq:bench:naive:…), removed afterwards.
func RunBroker(ctx context.Context, rdb *redis.Client, o BrokerOptions) (*BrokerResult, error) {
	o = o.withDefaults()
	opt := *rdb.Options()
	opt.PoolSize = o.Workers + 4
	c := redis.NewClient(&opt)
	defer c.Close()
	defer cleanup(context.WithoutCancel(ctx), c)
	if err := cleanup(ctx, c); err != nil {
		return nil, err
	}
	ps := benchProxies(o.Proxies)
	tr := &tracker{}
	res := &BrokerResult{Proxies: o.Proxies, Workers: o.Workers}
	var err error
	if res.Crawlq, err = runCrawlq(ctx, c, ps, o, tr); err != nil {
		return nil, fmt.Errorf("crawlq phase: %w", err)
	}
	if res.Naive, err = runNaive(ctx, c, ps, o, tr); err != nil {
		return nil, fmt.Errorf("naive phase: %w", err)
	}
	if res.Floor, err = runFloor(ctx, c, o); err != nil {
		return nil, fmt.Errorf("floor phase: %w", err)
	}
	res.DoubleLeases = tr.doubles.Load()
	return res, nil
}

// benchProxies are n distinct fake proxies on loopback (never dialled).
func benchProxies(n int) []proxies.Proxy {
	ps := make([]proxies.Proxy, n)
	for i := range ps {
		p, _ := proxies.ParseLine(fmt.Sprintf("http://u%d:pw@127.%d.%d.%d:8080", i, i>>16&255, i>>8&255, i&255))
		ps[i] = p
	}
	return ps
}

func runCrawlq(ctx context.Context, c *redis.Client, ps []proxies.Proxy, o BrokerOptions, tr *tracker) (Rate, error) {
	b := proxies.NewRedisBroker(c, proxies.Config{Pool: benchPool, Default: proxies.SiteConfig{MinInterval: proxies.NoMinInterval}})
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{}); err != nil {
		return Rate{}, err
	}
	l, err := b.Lease(ctx, benchSite, proxies.Datacenter, "warmup", "", benchTTL) // syncs the ready set
	if err != nil {
		return Rate{}, err
	}
	if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
		return Rate{}, err
	}
	return measure(ctx, o, func(ctx context.Context, w int) (bool, error) {
		l, err := b.Lease(ctx, benchSite, proxies.Datacenter, "bench", "", benchTTL)
		if errors.Is(err, proxies.ErrNoProxy) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		tr.hold(l.Proxy.ID)
		return true, b.Release(ctx, l, proxies.OK(time.Millisecond))
	})
}

func runNaive(ctx context.Context, c *redis.Client, ps []proxies.Proxy, o BrokerOptions, tr *tracker) (Rate, error) {
	nb := naive.New(c, naiveKeys)
	addrs := make([]string, len(ps))
	for i, p := range ps {
		addrs[i] = p.Host + ":" + p.Port + ":" + p.User
	}
	if err := nb.Load(ctx, addrs); err != nil {
		return Rate{}, err
	}
	return measure(ctx, o, func(ctx context.Context, w int) (bool, error) {
		p, err := nb.Get(ctx, "bench")
		if err != nil || p == "" {
			return false, err
		}
		tr.hold(p)
		return true, nb.Release(ctx, p)
	})
}

func runFloor(ctx context.Context, c *redis.Client, o BrokerOptions) (Rate, error) {
	return measure(ctx, o, func(ctx context.Context, w int) (bool, error) {
		if err := c.Ping(ctx).Err(); err != nil {
			return false, err
		}
		return true, c.Ping(ctx).Err()
	})
}

// measure runs cycle from o.Workers goroutines for o.Duration.
func measure(ctx context.Context, o BrokerOptions, cycle func(context.Context, int) (bool, error)) (Rate, error) {
	var done, misses atomic.Int64
	var firstErr error
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for w := range o.Workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ok, err := cycle(ctx, w)
				if err != nil {
					once.Do(func() { firstErr = err; close(stop) })
					return
				}
				if ok {
					done.Add(1)
				} else {
					misses.Add(1)
				}
			}
		})
	}
	select {
	case <-time.After(o.Duration):
	case <-ctx.Done():
	}
	once.Do(func() { close(stop) })
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	secs := time.Since(start).Seconds()
	return Rate{CyclesPerS: float64(done.Load()) / secs, Cycles: done.Load(), Misses: misses.Load()}, firstErr
}

// tracker counts overlapping leases of one (proxy, site) in this process.
type tracker struct {
	live    sync.Map // key -> *atomic.Int32
	doubles atomic.Int64
}

// hold marks key leased and unmarks it again; the caller releases the lease
// after hold returns, so another holder marking it meanwhile is a double.
func (t *tracker) hold(key string) {
	v, _ := t.live.LoadOrStore(key, new(atomic.Int32))
	n := v.(*atomic.Int32)
	if n.Add(1) > 1 {
		t.doubles.Add(1)
	}
	n.Add(-1)
}

// cleanup deletes every benchmark key.
func cleanup(ctx context.Context, c *redis.Client) error {
	for _, pattern := range []string{"crawlq:{" + benchPool + "}:*", naiveKeys + "*"} {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		var batch []string
		for iter.Next(ctx) {
			if batch = append(batch, iter.Val()); len(batch) == 1000 {
				if err := c.Unlink(ctx, batch...).Err(); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		if len(batch) > 0 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
