package proxies

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// PaceLearning has the broker learn a site's min_interval per class from
// the answers (min_interval: auto), cluster-wide, in the learned limit
// "pace:<site>:<class>" (limit.go; the learner is lua/lib/learn.lua, run
// inside the lease and release scripts):
//
//   - Every lease runs at the pace learned so far, read by the lease
//     script: a change reaches every worker at its next lease.
//   - Canaries (a few proxies) try a pace a step faster while the rest
//     keep the safe one; Clean clean answers of theirs in a row at that
//     pace, each within the pace of the canary's last, make it the pace.
//   - A rate limit or ban at a pace faster than the safe one ends the
//     probe there (the floor; the probe goes halfway back up). One at the
//     safe pace slows every proxy at once: back to the pace before a
//     recent speed-up, else 2.1 times slower, and nothing is probed for
//     Hold. A canary that hits the limit stops being one.
//   - A floor is forgotten after Reprobe, so a site that loosens is
//     found again; a pinned limit (PinLimit) is never moved.
//
// Finding the limit costs a few 429s on at most Canaries proxies at a
// time, not one per proxy.
type PaceLearning struct {
	// Min and Max bound the pace. Defaults 100ms and 5s.
	Min, Max time.Duration
	// Start is the pace before anything is learned. Default Max.
	Start time.Duration
	// Canaries is how many proxies probe a faster pace. Default 3.
	Canaries int
	// Clean is how many clean answers of the canaries in a row make
	// their pace the site's. Default 8.
	Clean int
	// Step is the probe's pace over the safe one while nothing faster
	// failed. Default 0.75.
	Step float64
	// Reprobe is how long a pace found too fast stays the floor. Default
	// 10 min.
	Reprobe time.Duration
	// Hold is how long nothing is probed after a slow-down (the site
	// tightened: poking it again at once only costs 429s). Default 2 min.
	Hold time.Duration
}

// Defaults of PaceLearning fields left zero.
const (
	DefaultLearnMin      = 100 * time.Millisecond
	DefaultLearnMax      = 5 * time.Second
	DefaultLearnCanaries = 3
	DefaultLearnClean    = 8
	DefaultLearnStep     = 0.75
	DefaultLearnReprobe  = 10 * time.Minute
	DefaultLearnHold     = 2 * time.Minute
)

// Filled is p with its zero fields at their defaults.
func (p PaceLearning) Filled() PaceLearning { return p.withDefaults() }

// withDefaults fills zero fields.
func (p PaceLearning) withDefaults() PaceLearning {
	if p.Min <= 0 {
		p.Min = DefaultLearnMin
	}
	if p.Max <= 0 {
		p.Max = max(DefaultLearnMax, p.Min)
	}
	p.Min = min(p.Min, p.Max)
	if p.Start <= 0 || p.Start > p.Max {
		p.Start = p.Max
	}
	p.Start = max(p.Start, p.Min)
	if p.Canaries <= 0 {
		p.Canaries = DefaultLearnCanaries
	}
	if p.Clean <= 0 {
		p.Clean = DefaultLearnClean
	}
	if p.Step <= 0 || p.Step >= 1 {
		p.Step = DefaultLearnStep
	}
	if p.Reprobe <= 0 {
		p.Reprobe = DefaultLearnReprobe
	}
	if p.Hold <= 0 {
		p.Hold = DefaultLearnHold
	}
	return p
}

// PaceName is the name of the learned limit of (site, class)'s pace.
func PaceName(site string, c Class) string { return paceName(site, c) }

func paceName(site string, c Class) string { return "pace:" + site + ":" + string(c) }

// ensurePace makes sure the learned pace of a's (site, class) exists
// with the site's bounds and settings, once per broker: what was learned
// before (by any server, before any restart) is kept.
func (b *RedisBroker) ensurePace(ctx context.Context, a *scArgs) error {
	if a.learn == nil || a.ensured.Load() {
		return nil
	}
	p, name := a.learn, a.paceName
	err := b.EnsureLimit(ctx, name, LimitSpec{Start: p.Start.Milliseconds(), Min: p.Min.Milliseconds(),
		Max: p.Max.Milliseconds(), Unit: "ms"})
	if err != nil {
		return err
	}
	key := b.k.limit(name)
	_, err = b.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.HSet(ctx, key, "canaries", p.Canaries, "need", p.Clean, "step", int64(p.Step*1000), "reprobe", p.Reprobe.Milliseconds(),
			"hold", p.Hold.Milliseconds())
		// the first probe, a step faster than the start
		tx.HSetNX(ctx, key, "probe", max(p.Min, time.Duration(float64(p.Start)*p.Step)).Milliseconds())
		return nil
	})
	if err != nil {
		return fmt.Errorf("learned limit %s: %w", name, err)
	}
	a.ensured.Store(true)
	return nil
}
