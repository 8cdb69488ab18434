package poolseed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"crawlq/proxies"
)

// Options configure Seed. Zero fields take the defaults named.
type Options struct {
	// Proxies is the pool size. Default 1000.
	Proxies int
	// Sites are the sites leased on. Default wildberries, ozon, avito.
	Sites []string
	// Cycles is the number of lease+release cycles per site. Default
	// Proxies (about one per proxy and site).
	Cycles int
	// Held is the number of leases per site kept open (one hour), so the
	// pool shows leased proxies (fewer when no proxy of a class is free).
	// Default 10.
	Held int
	// Workers is the number of goroutines per site. Default 16.
	Workers int
	// Holder prefixes the lease holders (Holder-1 … Holder-Workers).
	// Default "seed".
	Holder string
}

func (o Options) withDefaults() Options {
	if o.Proxies <= 0 {
		o.Proxies = 1000
	}
	if len(o.Sites) == 0 {
		o.Sites = []string{"wildberries", "ozon", "avito"}
	}
	if o.Cycles <= 0 {
		o.Cycles = o.Proxies
	}
	if o.Held <= 0 {
		o.Held = 10
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Holder == "" {
		o.Holder = "seed"
	}
	return o
}

// Proxies are n distinct fake proxies on 127.0.0.0/8 with credentials:
// 70% datacenter, 20% residential, 10% mobile.
func Proxies(n int) []proxies.Proxy {
	ps := make([]proxies.Proxy, n)
	for i := range ps {
		p, err := proxies.ParseLine(fmt.Sprintf("http://u%d:pw%d@127.%d.%d.%d:8080", i, i, 1+i>>16&127, i>>8&255, i&255))
		if err != nil {
			panic(err) // the format above always parses
		}
		p.Class = ClassOf(i)
		ps[i] = p
	}
	return ps
}

// ClassOf is the class Proxies gives the i-th proxy.
func ClassOf(i int) proxies.Class {
	switch i % 10 {
	case 7, 8:
		return proxies.Residential
	case 9:
		return proxies.Mobile
	}
	return proxies.Datacenter
}

// Seed imports opt.Proxies proxies into b and runs opt.Cycles lease+release
// cycles per site through it: mostly successes with latencies from 40 ms
// to 1.2 s, some proxy failures, bans and rate limits, then holds
// opt.Held leases per site open. Every state change goes through the
// broker's own scripts.
func Seed(ctx context.Context, b proxies.Broker, imp interface {
	Import(context.Context, []proxies.Proxy, proxies.ImportOptions) (int, error)
}, opt Options) error {
	opt = opt.withDefaults()
	if _, err := imp.Import(ctx, Proxies(opt.Proxies), proxies.ImportOptions{}); err != nil {
		return err
	}
	if err := warm(ctx, b, opt.Sites); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(opt.Sites))
	for _, site := range opt.Sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := drive(ctx, b, site, opt); err != nil {
				errc <- fmt.Errorf("seed %s: %w", site, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// warm syncs every (site, class) ready set one at a time with one neutral
// lease, so the sites' goroutines do not all read the whole pool at once.
func warm(ctx context.Context, b proxies.Broker, sites []string) error {
	for _, site := range sites {
		for _, c := range []proxies.Class{proxies.Datacenter, proxies.Residential, proxies.Mobile} {
			l, err := b.Lease(ctx, proxies.LeaseRequest{Site: site, Class: c, Holder: "seed-warm", Task: "warm", TTL: time.Minute})
			if err != nil {
				return fmt.Errorf("seed %s/%s: %w", site, c, err)
			}
			if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
				return err
			}
		}
	}
	return nil
}

// drive runs one site's cycles on opt.Workers goroutines, then holds
// opt.Held leases.
func drive(ctx context.Context, b proxies.Broker, site string, opt Options) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, opt.Workers)
	for w := range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("%s-%d", opt.Holder, w+1)
			for i := next.Add(1); i <= int64(opt.Cycles); i = next.Add(1) {
				if err := cycle(ctx, b, site, holder, i); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	for i := range opt.Held {
		_, err := b.Lease(ctx, proxies.LeaseRequest{Site: site, Class: ClassOf(i), Holder: opt.Holder + "-held", Task: "held", TTL: time.Hour})
		if err != nil && !errors.Is(err, proxies.ErrNoProxy) && !errors.Is(err, proxies.ErrPoolExhausted) {
			return err
		}
	}
	return nil
}

// cycle is one lease and release; the outcome follows from i.
func cycle(ctx context.Context, b proxies.Broker, site, holder string, i int64) error {
	l, err := b.Lease(ctx, proxies.LeaseRequest{Site: site, Class: ClassOf(int(i)), Holder: holder, Task: fmt.Sprintf("t%d", i), TTL: time.Minute})
	if errors.Is(err, proxies.ErrNoProxy) || errors.Is(err, proxies.ErrPoolExhausted) {
		return nil // a small class may run dry for a moment; skip the cycle
	}
	if err != nil {
		return err
	}
	return b.Release(ctx, l, outcome(i))
}

// outcome is 88% ok, 5% failed, 4% banned, 3% rate limited.
func outcome(i int64) proxies.Outcome {
	switch h := (i * 2654435761) % 100; {
	case h < 88:
		return proxies.OK(time.Duration(40+(i*7919)%1160) * time.Millisecond)
	case h < 93:
		return proxies.Failed("connect timeout")
	case h < 97:
		return proxies.Banned("captcha page")
	default:
		return proxies.RateLimited(10 * time.Minute)
	}
}
