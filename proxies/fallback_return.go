package proxies

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.uber.org/zap"
)

// After a return to the broker, the other servers may still be in fallback
// on their shards until their next probe, and the broker does not know
// what they sent yet (they replay it when they return). For the return
// window a server therefore leases only from the shard it had in
// fallback, which no other server used; a proxy the broker hands out from
// another shard goes back unused. Without this, the first server back
// leased proxies another server was still using: two IPs' requests closer
// than min_interval (I2), seen in the chaos run.

// returnWindow is how long after a return leases keep to the own shard:
// long enough for every server to probe, return and replay its uses.
func (f *FallbackBroker) returnWindow() time.Duration {
	return 3*f.cfg.ProbeInterval + 5*time.Second
}

// keepShard remembers the fallback shard for the return window; f.mu is
// held and f.local is still set.
func (f *FallbackBroker) keepShard(now time.Time) {
	f.returnShard = f.returnShard[:0]
	for _, id := range f.local.order {
		f.returnShard = append(f.returnShard, f.local.proxies[id])
	}
	f.returnUntil = now.Add(f.returnWindow())
}

// shardOnly is the own shard while the return window is open, else nil.
func (f *FallbackBroker) shardOnly() []Proxy {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == modeFallback || !f.now().Before(f.returnUntil) {
		return nil
	}
	return f.returnShard
}

// primaryLease is the broker's Lease, kept to the own shard during the
// return window.
func (f *FallbackBroker) primaryLease(ctx context.Context, r LeaseRequest) (*Lease, error) {
	shard := f.shardOnly()
	l, err := f.primary.Lease(ctx, r)
	if err != nil || shard == nil || inShard(shard, l.Proxy.ID) {
		return l, err
	}
	if err := f.primary.Release(ctx, l, Neutral()); err != nil { // nothing was sent through it
		return nil, err
	}
	return f.leaseFromShard(ctx, shard, r)
}

// leaseFromShard leases the first free proxy of the shard that fits the
// class and site, starting at a random place to spread the load.
func (f *FallbackBroker) leaseFromShard(ctx context.Context, shard []Proxy, r LeaseRequest) (*Lease, error) {
	start := rand.N(len(shard) + 1)
	for i := range shard {
		p := shard[(start+i)%len(shard)]
		if p.Class != r.Class || !p.AllowedOn(r.Site) {
			continue
		}
		l, err := f.primary.LeaseProxy(ctx, r, p.ID)
		if err == nil || IsUnavailable(err) || ctx.Err() != nil {
			return l, err
		}
	}
	wait := f.cfg.ProbeInterval
	return nil, &NotReadyError{Site: r.Site, Class: r.Class, Until: f.now().Add(wait), Wait: wait, Leased: true}
}

// primaryLeaseProxy is the broker's LeaseProxy; during the return window a
// proxy of another server's shard is ErrBusy (its server may still be
// using it), so a sticky session starts fresh instead.
func (f *FallbackBroker) primaryLeaseProxy(ctx context.Context, r LeaseRequest, proxyID string) (*Lease, error) {
	if shard := f.shardOnly(); shard != nil && !inShard(shard, proxyID) {
		return nil, ErrBusy
	}
	return f.primary.LeaseProxy(ctx, r, proxyID)
}

func inShard(shard []Proxy, id string) bool {
	for _, p := range shard {
		if p.ID == id {
			return true
		}
	}
	return false
}

// A return tells the broker what happened in fallback: the releases of
// broker leases queued meanwhile, the local uses still cooling (so the
// broker paces them, I2) and the open local leases (registered for their
// holder and task, so no other server gets them, I1). It does so in
// rounds made without f.mu, so this server's sessions keep leasing and
// releasing locally meanwhile. Each round takes, under f.mu, what the
// broker has not been told yet, including what changed during the
// previous round (a lease opened, a registered one released), and tells
// it without the lock. The pairs a round involves are reserved in the
// local pool: no new lease takes them until the return ends, so what the
// broker is told stays true. Once a round finds nothing left, the switch
// to the broker is made under that same lock, so nothing changes between
// the last look and the switch. A pool that never stops changing has its
// round maxFreeRounds+1 made under f.mu, its round trips included, so
// the return ends.

// maxFreeRounds bounds the rounds of a return made without f.mu.
const maxFreeRounds = 4

// returning is a return in progress: what the broker has been told so
// far. Only the return's goroutine uses it.
type returning struct {
	uses  map[leaseKey]time.Time // per pair, the release time of the local use told
	regs  map[movedKey]heldLease // local or adopted lease -> the broker lease registered for it
	ended map[movedKey]bool      // leases the broker refused: their sessions retire
	// replayed and cooled count the queued releases and local uses told.
	replayed, cooled int
}

// returnWork is what one round of a return tells the broker.
type returnWork struct {
	pending []pendingRelease // queued releases of broker leases
	ends    []regEnd         // registered leases whose local lease ended since
	uses    []localUse       // local uses still cooling, not told yet
	leases  []localLease     // open leases not registered yet
}

// regEnd is a registered broker lease whose local lease has ended: it is
// released with the local outcome (useAt is the local use it stands for).
type regEnd struct {
	key   movedKey
	l     Lease
	o     Outcome
	useAt time.Time
}

func (w *returnWork) empty() bool {
	return len(w.pending)+len(w.ends)+len(w.uses)+len(w.leases) == 0
}

// recover returns to the broker (see above); it stays in fallback if
// Redis stops answering again.
func (f *FallbackBroker) recover(ctx context.Context, members []string, pool []Proxy) bool {
	r := &returning{uses: map[leaseKey]time.Time{}, regs: map[movedKey]heldLease{}, ended: map[movedKey]bool{}}
	for round := 0; ; round++ {
		f.mu.Lock()
		if f.mode != modeFallback {
			f.mu.Unlock()
			return false
		}
		w := f.returnWork(r)
		if w.empty() || round == maxFreeRounds {
			ok := f.finish(ctx, r, w, members, pool)
			f.mu.Unlock()
			return ok
		}
		f.mu.Unlock()
		if err := f.tell(ctx, r, w); err != nil {
			f.mu.Lock()
			f.abandon(w, err)
			f.mu.Unlock()
			return false
		}
	}
}

// finish tells the broker the last round (nothing, unless the pool kept
// changing) and switches to it; f.mu is held throughout.
func (f *FallbackBroker) finish(ctx context.Context, r *returning, w *returnWork, members []string, pool []Proxy) bool {
	if err := f.tell(ctx, r, w); err != nil {
		f.abandon(w, err)
		return false
	}
	f.commit(r, members, pool)
	return true
}

// returnWork takes what the broker has not been told yet and reserves
// its pairs; f.mu is held.
func (f *FallbackBroker) returnWork(r *returning) *returnWork {
	now := f.now()
	w := &returnWork{pending: f.pending, ends: f.endedRegs(r, now)}
	f.pending = nil
	ending := map[leaseKey]bool{}
	for _, e := range w.ends {
		ending[leaseKey{e.key.site, e.key.id}] = true
	}
	for _, u := range f.local.cooling(now) {
		if k := (leaseKey{u.site, u.id}); !ending[k] && !r.uses[k].Equal(u.at) {
			w.uses = append(w.uses, u)
		}
	}
	for _, ll := range f.local.openLeases(now) {
		mk := movedKey{ll.l.Site, ll.l.Proxy.ID, ll.l.Token}
		if _, ok := r.regs[mk]; !ok && !r.ended[mk] {
			w.leases = append(w.leases, ll)
		}
	}
	f.local.reserve(w)
	return w
}

// endedRegs lists the registered leases whose local lease has ended
// since their registration; a lease its task took again (a new token)
// needs nothing: registering that one takes the broker lease over. f.mu
// is held.
func (f *FallbackBroker) endedRegs(r *returning, now time.Time) []regEnd {
	var out []regEnd
	for mk, h := range r.regs {
		if f.local.current(&Lease{Site: mk.site, Proxy: Proxy{ID: mk.id}, Token: mk.token}) != nil {
			continue
		}
		k := leaseKey{mk.site, mk.id}
		if cur := f.local.live(k, now); cur != nil && cur.l.Task == h.l.Task {
			delete(r.regs, mk)
			continue
		}
		e := regEnd{key: mk, l: h.l, o: Neutral()}
		if u, ok := f.local.used[k]; ok {
			e.useAt = u.at
			if u.task == h.l.Task {
				e.o = u.o
			}
		}
		out = append(out, e)
	}
	return out
}

// reserve keeps the pairs of w from new leases until the return ends.
func (p *localPool) reserve(w *returnWork) {
	if p.reserved == nil {
		p.reserved = map[leaseKey]bool{}
	}
	for _, e := range w.ends {
		p.reserved[leaseKey{e.key.site, e.key.id}] = true
	}
	for _, u := range w.uses {
		p.reserved[leaseKey{u.site, u.id}] = true
	}
	for _, ll := range w.leases {
		p.reserved[leaseKey{ll.l.Site, ll.l.Proxy.ID}] = true
	}
}

// tell sends one round to the broker, noting in r what it was told; an
// error means Redis stopped answering (or the return is cancelled), and
// w keeps the queued releases not replayed.
func (f *FallbackBroker) tell(ctx context.Context, r *returning, w *returnWork) error {
	if err := f.replayPending(ctx, r, w); err != nil {
		return err
	}
	if err := f.endRegistered(ctx, r, w.ends); err != nil {
		return err
	}
	if err := f.replayUses(ctx, r, w.uses); err != nil {
		return err
	}
	return f.registerLeases(ctx, r, w.leases)
}

// replayPending replays the queued broker releases of w, removing each
// one replayed (or refused) from w.
func (f *FallbackBroker) replayPending(ctx context.Context, r *returning, w *returnWork) error {
	for len(w.pending) > 0 {
		p := w.pending[0]
		err := f.primary.Release(ctx, &p.l, p.o)
		if interrupted(ctx, err) {
			return err
		}
		if err == nil {
			r.replayed++
		}
		w.pending = w.pending[1:]
	}
	return nil
}

// endRegistered releases the registered broker leases whose local lease
// has ended, with the local outcome.
func (f *FallbackBroker) endRegistered(ctx context.Context, r *returning, ends []regEnd) error {
	for _, e := range ends {
		err := f.primary.Release(ctx, &e.l, e.o)
		if interrupted(ctx, err) {
			return err
		}
		delete(r.regs, e.key)
		if !e.useAt.IsZero() {
			r.uses[leaseKey{e.key.site, e.key.id}] = e.useAt
		}
		if err == nil {
			r.cooled++
		}
	}
	return nil
}

// replayUses tells the broker of every (proxy, site) used and released in
// fallback that is still cooling: a LeaseProxy and a Release with the local
// outcome, so the broker spaces its next use by min_interval (I2) and
// counts it. A pair the broker refuses is left as the broker has it.
func (f *FallbackBroker) replayUses(ctx context.Context, r *returning, uses []localUse) error {
	for _, u := range uses {
		l, err := f.primary.LeaseProxy(ctx, LeaseRequest{Site: u.site, Holder: u.holder, Task: u.task, TTL: u.ttl}, u.id)
		if err == nil {
			err = f.primary.Release(ctx, l, u.o)
		}
		if interrupted(ctx, err) {
			return err
		}
		r.uses[leaseKey{u.site, u.id}] = u.at
		if err == nil {
			r.cooled++
		}
	}
	return nil
}

// interrupted reports whether a return to the broker must stop: Redis
// stopped answering or the loop is ending.
func interrupted(ctx context.Context, err error) bool {
	return err != nil && (IsUnavailable(err) || ctx.Err() != nil)
}

// registerLeases registers open local or adopted leases with the broker
// for their holder and task.
func (f *FallbackBroker) registerLeases(ctx context.Context, r *returning, leases []localLease) error {
	for _, ll := range leases {
		if err := f.register(ctx, r, ll); err != nil {
			return err
		}
	}
	return nil
}

// register registers one open lease, noting in r whether it was. One the
// broker refuses is ended at once (Ended: its session sends nothing more)
// and, when the broker only said the proxy is not ready yet (its pacing
// knows nothing of this lease's requests), the proxy is kept cooling on
// the broker a min_interval from now, so no session of another server
// sends through it sooner after this lease's last request (I2 across
// the return). Only an interruption is returned.
func (f *FallbackBroker) register(ctx context.Context, r *returning, ll localLease) error {
	l := ll.l
	nl, err := f.primary.LeaseProxy(ctx, LeaseRequest{Site: l.Site, Holder: l.Holder, Task: l.Task, TTL: ll.ttl}, l.Proxy.ID)
	if interrupted(ctx, err) {
		return err
	}
	mk := movedKey{l.Site, l.Proxy.ID, l.Token}
	if err == nil {
		r.regs[mk] = heldLease{l: *nl, ttl: ll.ttl}
		return nil
	}
	f.log.Info("fallback lease not registered: its session retires", zap.String("proxy", l.Proxy.ID),
		zap.String("site", l.Site), zap.String("task", l.Task), zap.Error(err))
	r.ended[mk] = true
	f.mu.Lock()
	f.ended[mk] = f.now()
	f.mu.Unlock()
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return f.primary.cool(ctx, l.Site, l.Proxy, f.primary.cfg.site(l.Site).MinInterval)
	}
	return nil
}

// LeaseEnder is a broker that can end a lease before its expiry without
// its holder's asking (FallbackBroker, on its return to Redis).
type LeaseEnder interface {
	// Ended reports whether l must not be used again.
	Ended(l *Lease) bool
}

var _ LeaseEnder = (*FallbackBroker)(nil)

// Ended reports whether l can no longer send: a local or adopted lease a
// return to the broker could not register (its proxy may be another
// session's now). It reads no Redis, so a session asks it before each
// request rather than learn it at its next Extend.
func (f *FallbackBroker) Ended(l *Lease) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.ended[movedKey{l.Site, l.Proxy.ID, l.Token}]
	return ok
}

// commit switches to the broker with what r registered; f.mu is held.
func (f *FallbackBroker) commit(r *returning, members []string, pool []Proxy) {
	now := f.now()
	for mk := range r.ended {
		delete(f.held, leaseKey{mk.site, mk.id})
		f.ended[mk] = now
	}
	for mk, h := range r.regs {
		nl := h.l
		f.moved[mk] = &nl
		f.held[leaseKey{mk.site, mk.id}] = h
	}
	f.members, f.pool = members, pool
	down := now.Sub(f.since)
	f.keepShard(now)
	f.setMode(modeBroker, now)
	f.log.Warn("broker redis answers again: back to the broker", zap.Duration("down", down),
		zap.Int("registered_leases", len(r.regs)), zap.Int("ended_leases", len(r.ended)),
		zap.Int("replayed_releases", r.replayed), zap.Int("paced_proxies", r.cooled), zap.Int("pool", len(pool)))
}

// abandon stays in fallback after err: the queued releases w did not
// replay go back to the queue, and the pairs are free again; f.mu is held.
func (f *FallbackBroker) abandon(w *returnWork, err error) {
	f.pending = append(w.pending, f.pending...)
	if over := len(f.pending) - f.cfg.MaxPending; over > 0 {
		f.pending = f.pending[over:]
	}
	f.local.reserved = nil
	f.log.Warn("broker redis answered but failed again during the return", zap.Error(err))
}

// cool keeps p from being leased on site for d from now (lua/cool.lua).
func (b *RedisBroker) cool(ctx context.Context, site string, p Proxy, d time.Duration) error {
	_, err := b.eval(ctx, coolScript, b.k.coolKeys(site, p.Class), []any{b.cfg.skew(), p.ID, max(d.Milliseconds(), 0)})
	if err != nil && !interrupted(ctx, err) {
		f := fmt.Errorf("cool proxy %s on %s: %w", p.ID, site, err)
		b.log.Warn("fallback return", zap.Error(f))
		return nil
	}
	return err
}
