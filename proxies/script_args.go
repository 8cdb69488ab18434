package proxies

import "sync/atomic"

// scArgs are the script keys and per-site constant arguments of one
// (site, class), built and boxed once so the lease path allocates no key
// strings.
type scArgs struct {
	lease   []any // leaseScript and leaseProxyScript KEYS
	release []any // releaseScript KEYS (busy only in exclusive mode)
	extend  []any // extendScript KEYS
	// field is the known field, site the site name, minInterval its
	// min_interval in ms, clearanceWait its clearance wait in ms.
	field, site, minInterval, clearanceWait any
	// failPolicy is ARGV[9..10] of releaseScript (fail penalty and its
	// cap, ms), banPolicy ARGV[12..14] (quarantine base, cap and floor).
	failPolicy, banPolicy []any
	sc                    SiteConfig
	// learn is the site's pace learning (nil: a fixed min_interval),
	// learned its ARGV[7] of releaseScript (1 learned, 0 fixed), ensured
	// whether this broker made sure its limit exists (ensurePace).
	learn    *PaceLearning
	learned  any
	paceName string
	ensured  atomic.Bool
}

// paceOf is the pace in ms lease l runs at, as the scripts take it: the
// site's min_interval, or the lease's own when the pace is learned.
func (a *scArgs) paceOf(l *Lease) any {
	if a.learn == nil {
		return a.minInterval
	}
	return l.MinInterval.Milliseconds()
}

// argsOf returns the cached scArgs of (site, class).
func (b *RedisBroker) argsOf(site string, class Class) *scArgs {
	key := siteClass{site: site, class: class}
	b.mu.RLock()
	a := b.sets[key]
	b.mu.RUnlock()
	if a != nil {
		return a
	}
	a = b.newArgs(site, class)
	b.mu.Lock()
	b.sets[key] = a
	b.mu.Unlock()
	return a
}

func (b *RedisBroker) newArgs(site string, class Class) *scArgs {
	k, sc := b.k, b.cfg.site(site)
	a := &scArgs{
		lease:         k.leaseKeys(site, class),
		release:       k.releaseKeys(site, class, b.cfg.Mode == ModeExclusive),
		extend:        k.extendKeys(site, class),
		field:         knownField(site, class),
		site:          site,
		minInterval:   sc.MinInterval.Milliseconds(),
		clearanceWait: sc.ClearanceWait.Milliseconds(),
		failPolicy:    []any{sc.FailPenalty.Milliseconds(), sc.FailPenaltyCap.Milliseconds()},
		banPolicy:     []any{sc.QuarantineBase.Milliseconds(), sc.QuarantineCap.Milliseconds(), sc.QuarantineFloor.Milliseconds()},
		sc:            sc,
		learned:       int64(0),
	}
	if sc.Learn != nil {
		a.learn, a.learned, a.paceName = sc.Learn, int64(1), paceName(site, class)
		a.minInterval = -sc.Learn.Max.Milliseconds() // learned; the upper bound until the limit exists
	}
	return a
}
