package proxies

import (
	"fmt"
	"sort"
	"time"
)

// localPool is one server's fallback shard: local leases fenced by negative
// tokens (broker tokens are positive), with per-(proxy, site) pacing on the
// local clock. Its owner serialises every call.
type localPool struct {
	cfg     Config
	parts   []string         // partitioned mode's sites
	proxies map[string]Proxy // the shard, by ID
	order   []string         // shard IDs, sorted
	start   time.Time        // ready-at of pairs not in ready (switch + grace)
	ready   map[leaseKey]time.Time
	leases  map[leaseKey]*localLease
	used    map[leaseKey]localUse // last local release per pair
	token   int64                 // last local token, counting down from 0
	// reserved pairs are being told to the broker by a return: no new
	// lease takes them until the return ends (see fallback_return.go).
	reserved map[leaseKey]bool
}

// localLease is an open local (or adopted broker) lease.
type localLease struct {
	l   Lease
	ttl time.Duration
}

// localUse is the last local release of one pair, replayed to the broker.
type localUse struct {
	site, id, holder, task string
	ttl                    time.Duration
	o                      Outcome
	at                     time.Time // when it was released
}

func newLocalPool(b *RedisBroker, shard []Proxy, start time.Time) *localPool {
	p := &localPool{cfg: b.Config(), proxies: map[string]Proxy{}, start: start,
		ready: map[leaseKey]time.Time{}, leases: map[leaseKey]*localLease{}, used: map[leaseKey]localUse{}}
	p.parts = p.cfg.partitionSites()
	for _, px := range shard {
		p.proxies[px.ID] = px
		p.order = append(p.order, px.ID)
	}
	sort.Strings(p.order)
	return p
}

// hold keeps pair k, if in the shard, from being leased before until (a
// quarantine the broker knew of).
func (p *localPool) hold(k leaseKey, until time.Time) {
	if _, ok := p.proxies[k.id]; !ok {
		return
	}
	at, ok := p.ready[k]
	if !ok {
		at = p.start
	}
	if until.After(at) {
		p.ready[k] = until
	}
}

// serves reports whether px may serve site in the broker's mode.
func (p *localPool) serves(px Proxy, site string) bool {
	if p.cfg.Mode == ModePartitioned {
		return AssignSite(px, p.parts) == site
	}
	return px.AllowedOn(site)
}

// readyAt is when pair k may be leased again; a reserved pair is looked
// at again LeasePoll from now.
func (p *localPool) readyAt(k leaseKey, now time.Time) time.Time {
	at, ok := p.ready[k]
	if !ok {
		at = p.start
	}
	if p.reserved[k] && !at.After(now) {
		at = now.Add(p.cfg.LeasePoll)
	}
	if p.cfg.Mode == ModeExclusive {
		if other := p.busyUntil(k, now); other.After(at) {
			at = other
		}
	}
	return at
}

// busyUntil is when exclusive mode's live lease of k's proxy on another
// site expires (zero if none).
func (p *localPool) busyUntil(k leaseKey, now time.Time) time.Time {
	var until time.Time
	for ok, ll := range p.leases {
		if ok.id == k.id && ok.site != k.site && !now.After(ll.l.Expires) && ll.l.Expires.After(until) {
			until = ll.l.Expires
		}
	}
	return until
}

// live is k's lease if it has not expired.
func (p *localPool) live(k leaseKey, now time.Time) *localLease {
	if ll := p.leases[k]; ll != nil && !now.After(ll.l.Expires) {
		return ll
	}
	return nil
}

// lease takes the shard proxy of class that has waited longest for site.
func (p *localPool) lease(r LeaseRequest, now time.Time) (*Lease, error) {
	site, class := r.Site, r.Class
	if err := checkLocalArgs(site, class, r.TTL); err != nil {
		return nil, err
	}
	best, bestAt, first, n, leased := "", time.Time{}, time.Time{}, 0, false
	for _, id := range p.order {
		if px := p.proxies[id]; px.Class != class || !p.serves(px, site) {
			continue
		}
		n++
		k := leaseKey{site, id}
		leased = leased || p.live(k, now) != nil
		at := p.readyAt(k, now)
		switch {
		case !at.After(now) && p.live(k, now) == nil && (best == "" || at.Before(bestAt)):
			best, bestAt = id, at
		case at.After(now) && (first.IsZero() || at.Before(first)):
			first = at
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("site %s class %s: this server's fallback shard has no proxy: %w", site, class, ErrPoolEmpty)
	}
	if best == "" {
		return nil, &NotReadyError{Site: site, Class: class, Until: first, Wait: first.Sub(now), Leased: leased}
	}
	return p.take(leaseKey{site, best}, r, now, now), nil
}

// leaseProxy leases one named shard proxy (sticky resume); a live local
// lease of the same task is taken over, as the broker does.
func (p *localPool) leaseProxy(r LeaseRequest, id string, now time.Time) (*Lease, error) {
	site := r.Site
	px, ok := p.proxies[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("proxy %s on site %s is not in this server's fallback shard: %w", id, site, ErrBusy)
	case r.TTL < time.Millisecond:
		return nil, &ConfigError{Field: "ttl", Reason: "lease ttl must be at least 1ms"}
	case !p.serves(px, site):
		return nil, fmt.Errorf("proxy %s not in the %s pool of site %s: %w", id, px.Class, site, ErrUnknownProxy)
	}
	k := leaseKey{site, id}
	if cur := p.live(k, now); cur != nil {
		if cur.l.Task != r.Task {
			return nil, fmt.Errorf("proxy %s on site %s: %w", id, site, ErrBusy)
		}
		return p.take(k, r, now, now.Add(p.cfg.site(site).MinInterval)), nil
	}
	if at := p.readyAt(k, now); at.After(now) {
		return nil, &NotReadyError{Site: site, Class: px.Class, Until: at, Wait: at.Sub(now)}
	}
	return p.take(k, r, now, now), nil
}

// take leases pair k with a new local token.
func (p *localPool) take(k leaseKey, r LeaseRequest, now, notBefore time.Time) *Lease {
	p.token--
	mi := p.cfg.site(k.site).MinInterval
	l := Lease{Proxy: p.proxies[k.id], Site: k.site, Token: p.token, Holder: r.Holder, Task: r.Task,
		Expires: now.Add(r.TTL), NotBefore: notBefore, MinInterval: mi}
	p.leases[k] = &localLease{l: l, ttl: r.TTL}
	p.ready[k] = l.Expires.Add(mi)
	out := l
	return &out
}

// adopt keeps a broker lease of a shard proxy as a local lease; false when
// the proxy is not in the shard.
func (p *localPool) adopt(l Lease, ttl time.Duration) bool {
	if _, ok := p.proxies[l.Proxy.ID]; !ok {
		return false
	}
	k := leaseKey{l.Site, l.Proxy.ID}
	p.leases[k] = &localLease{l: l, ttl: ttl}
	p.ready[k] = l.Expires.Add(p.cfg.site(l.Site).MinInterval)
	return true
}

// current is k's lease if its token is l's.
func (p *localPool) current(l *Lease) *localLease {
	if ll := p.leases[leaseKey{l.Site, l.Proxy.ID}]; ll != nil && ll.l.Token == l.Token {
		return ll
	}
	return nil
}

// extend pushes a local lease's expiry to now+ttl.
func (p *localPool) extend(l *Lease, ttl time.Duration, now time.Time) (*Lease, error) {
	ll := p.current(l)
	if ll == nil {
		return nil, fmt.Errorf("extend lease %d of proxy %s on %s in fallback: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
	}
	ll.l.Expires, ll.ttl = now.Add(ttl), ttl
	p.ready[leaseKey{l.Site, l.Proxy.ID}] = ll.l.Expires.Add(ll.l.MinInterval)
	out := ll.l
	return &out, nil
}

// release ends a local lease; the outcome sets the pair's ready-at.
func (p *localPool) release(l *Lease, o Outcome, now time.Time) error {
	ll := p.current(l)
	if ll == nil {
		return fmt.Errorf("release lease %d of proxy %s on %s in fallback: %w", l.Token, l.Proxy.ID, l.Site, ErrStaleLease)
	}
	at, err := readyAfter(o, p.cfg.site(l.Site), now)
	if err != nil {
		return err
	}
	k := leaseKey{l.Site, l.Proxy.ID}
	delete(p.leases, k)
	p.ready[k] = at
	p.used[k] = localUse{site: l.Site, id: l.Proxy.ID, holder: ll.l.Holder, task: ll.l.Task, ttl: ll.ttl, o: o, at: now}
	return nil
}

// readyAfter is when a pair released with o at now is ready again, like
// the broker's release (bans take the base quarantine, without jitter).
func readyAfter(o Outcome, sc SiteConfig, now time.Time) (time.Time, error) {
	mi := max(sc.MinInterval, 0)
	switch o.Kind {
	case OutcomeOK, OutcomeNeutral:
		return now.Add(max(o.RetryAfter, mi)), nil
	case OutcomeFailed:
		return now.Add(mi + sc.FailPenalty), nil
	case OutcomeRateLimited:
		return now.Add(max(o.RetryAfter, mi)), nil
	case OutcomeBanned:
		return now.Add(max(mi, sc.QuarantineBase)), nil
	}
	return time.Time{}, &ConfigError{Field: "outcome", Reason: fmt.Sprintf("unknown outcome kind %q", o.Kind)}
}

// open counts the open local leases.
func (p *localPool) open(now time.Time) int { return len(p.openLeases(now)) }

// openLeases lists the unexpired leases, sorted by site and proxy.
func (p *localPool) openLeases(now time.Time) []localLease {
	var out []localLease
	for k := range p.leases {
		if ll := p.live(k, now); ll != nil {
			out = append(out, *ll)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].l, out[j].l
		return a.Site < b.Site || a.Site == b.Site && a.Proxy.ID < b.Proxy.ID
	})
	return out
}

// cooling lists the pairs released locally that are not leased and not yet
// ready again, sorted.
func (p *localPool) cooling(now time.Time) []localUse {
	var out []localUse
	for k, u := range p.used {
		if p.leases[k] == nil && p.ready[k].After(now) {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].site < out[j].site || out[i].site == out[j].site && out[i].id < out[j].id
	})
	return out
}

// checkLocalArgs checks a local lease's arguments as the broker does.
func checkLocalArgs(site string, class Class, ttl time.Duration) error {
	switch {
	case site == "":
		return &ConfigError{Field: "site", Reason: "empty site name"}
	case !class.Valid():
		return &ConfigError{Field: "class", Reason: fmt.Sprintf("unknown class %q", class)}
	case ttl < time.Millisecond:
		return &ConfigError{Field: "ttl", Reason: "lease ttl must be at least 1ms"}
	}
	return nil
}
