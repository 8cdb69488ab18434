package sessions

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
)

// ErrLeaseLost means the session's lease expired and was re-issued, so the
// session may no longer send through its proxy.
var ErrLeaseLost = errors.New("session lost its proxy lease")

// ErrClosed means the session was retired or closed.
var ErrClosed = errors.New("session is closed")

// Action says what the session did after a response was recorded.
type Action int

// Actions returned by Record.
const (
	// Continue: the session goes on with the same proxy.
	Continue Action = iota
	// Retired: the proxy was released with the verdict's outcome and the
	// stored session dropped; the next Open starts fresh.
	Retired
	// Paused: the proxy was released to cool down (rate limited); the stored
	// session is kept so a retry resumes the same proxy and cookies.
	Paused
)

// Session is one task's sticky identity: a lease, cookies and a profile.
type Session struct {
	m       *Manager
	rec     *record
	jar     *jar
	profile fetcher.Profile
	resumed bool
	// callerStores: the record is written by the caller (StoreIn), not on
	// each response (Config.SharesRedis; a confirmation's second session
	// is never written). stored: a record of this session is in Redis.
	callerStores bool

	mu sync.Mutex
	// rotateWhy, when set, makes the session's end rotate its modem
	// (its site's rotate_after was reached).
	rotateWhy string
	stored    bool
	lease     *proxies.Lease
	lastDone  time.Time // local time the last response completed
	lastPage  string    // the final URL of the last navigation, the next request's Referer
	// inflight counts browser requests past Gate without an answer yet.
	inflight int
	earliest time.Time // local time of the lease's (and exit hold's) NotBefore
	// firstSent is when the lease's first request went out, paced how
	// many of its later requests went out within the pace's slack of
	// the answer before them: the pace learner's evidence (evidence).
	firstSent time.Time
	paced     int
	// hold is the session's hold of its exit IP (exit.go), nil for a
	// proxy whose exit is its host.
	hold *proxies.ExitHold
	// cookieIP is the exit IP the jar's cookies were set from ("" for
	// none yet): a session on another IP drops them.
	cookieIP string
	lost     bool
	closed   bool
	stop     chan struct{}
	stopped  chan struct{}

	// validUntil is the local time the lease expires unless extended: a
	// session whose extends fail (Redis away, a failover's replica not
	// acknowledging) stops sending then, before the proxy can be leased
	// again (I1). Under mu.
	validUntil time.Time
}

func newSession(m *Manager, rec *record, l *proxies.Lease, resumed bool) *Session {
	issued := l.Expires.Add(-m.cfg.LeaseTTL)
	s := &Session{
		m: m, rec: rec, jar: newJar(rec.Cookies), profile: profileFor(rec), resumed: resumed,
		lease: l, earliest: time.Now().Add(l.NotBefore.Sub(issued)), validUntil: time.Now().Add(l.Expires.Sub(issued)),
		stop: make(chan struct{}), stopped: make(chan struct{}),
	}
	if rec.Exit != nil {
		s.cookieIP = rec.Exit.IP // the stored cookies were set from it
	}
	return s
}

// Task is the task ID the session belongs to.
func (s *Session) Task() string { return s.rec.Task }

// Resumed reports whether Open resumed a stored session.
func (s *Session) Resumed() bool { return s.resumed }

// Lease returns the current lease (its expiry moves as it is extended).
func (s *Session) Lease() proxies.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.lease
}

// Proxy is the proxy URL to send through (with credentials: never print it).
// A gateway's carries the session's own session id.
func (s *Session) Proxy() *url.URL { return s.proxyURL() }

// ProxyID is the leased proxy's ID, safe to print.
func (s *Session) ProxyID() string { return s.Lease().Proxy.ID }

// Jar is the session's cookie jar.
func (s *Session) Jar() http.CookieJar { return s.jar }

// Profile is the session's header profile.
func (s *Session) Profile() fetcher.Profile { return s.profile }

// Usage is how many responses the session has recorded.
func (s *Session) Usage() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Usage
}

// Score is the session's error score.
func (s *Session) Score() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Score
}

// Pace waits until the proxy may send to the site again: not before the
// lease's NotBefore (and its exit hold's), and min_interval after the
// last response (I2). It only waits: what is decided about the request
// is admit's, after the wait.
func (s *Session) Pace(ctx context.Context) error {
	for {
		wait, err := s.untilNext()
		if err != nil || wait <= 0 {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ready waits for the request's turn (Pace) and admits it (admit); an
// exit found moved is held anew, and its own pacing waited for.
func (s *Session) ready(ctx context.Context) error {
	for {
		if err := s.Pace(ctx); err != nil {
			return err
		}
		moved, err := s.admit(ctx)
		if err != nil {
			return err
		}
		if !moved {
			s.sending()
			return nil
		}
	}
}

// sending notes a request about to go out, for the pace learner
// (evidence): the lease's first, or one sent at the lease's pace.
func (s *Session) sending() {
	now := s.m.cfg.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.firstSent.IsZero():
		s.firstSent = now
	case s.inflight == 0 && !s.lastDone.IsZero() && now.Sub(s.lastDone) <= proxies.PacedSlack(s.lease.MinInterval):
		s.paced++
	}
}

// evidence adds to an ok outcome what the pace learner needs of the
// lease (proxies.Outcome's Sent and Paced).
func (s *Session) evidence(o proxies.Outcome) proxies.Outcome {
	if o.Kind != proxies.OutcomeOK {
		return o
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.firstSent.IsZero() {
		o.Sent = max(s.m.cfg.Clock.Now().Sub(s.firstSent), time.Microsecond)
	}
	o.Paced = s.paced
	return o
}

// admit decides about the request about to be sent, once its wait is
// over: an exit that may have moved is learned again (moved: a new one
// is held, whose pacing the request must wait for; nothing is counted),
// then a modem counts it against the site's budget, or ends the session
// (its modem rotates, or must rotate first) and the request is not sent;
// any other proxy counts it the same way, its IP resting instead of
// rotating (volume.go).
// A wait that was cancelled never gets here, so counts nothing.
func (s *Session) admit(ctx context.Context) (moved bool, err error) {
	if moved, err := s.refreshExit(ctx); err != nil || moved {
		return moved, err
	}
	if err := s.modemGate(ctx); err != nil {
		return false, err
	}
	return false, s.volumeGate(ctx)
}

// inflightPoll is how often Pace looks again while a browser request of
// the session has no answer yet.
const inflightPoll = 20 * time.Millisecond

func (s *Session) untilNext() (time.Duration, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight > 0 {
		return inflightPoll, nil // the min interval runs from its answer
	}
	next := s.earliest
	if !s.lastDone.IsZero() {
		if after := s.lastDone.Add(s.lease.MinInterval); after.After(next) {
			next = after
		}
	}
	return time.Until(next), nil
}

func (s *Session) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.lost:
		return ErrLeaseLost
	case time.Now().After(s.validUntil), s.leaseEnded():
		s.lost = true
		return ErrLeaseLost
	}
	return nil
}

// leaseEnded asks a broker that can tell (Caps.Ends: the fallback's
// return to Redis) whether the lease ended before its time: the session
// must not send again, nor wait for its next Extend to learn it. Under
// s.mu.
func (s *Session) leaseEnded() bool {
	e := s.m.cfg.Caps.Ends
	return e != nil && e.Ended(s.lease)
}

// Record notes a judged response: it updates the error score and usage,
// stores the cookies, and retires or pauses the session when the verdict or
// its health says so, releasing the proxy with the mapped Outcome.
func (s *Session) Record(ctx context.Context, v detect.Verdict, latency time.Duration) (Action, error) {
	retire, pause := s.note(v)
	switch {
	case pause:
		return Paused, s.end(ctx, Outcome(v, latency), false)
	case retire:
		return Retired, s.end(ctx, Outcome(v, latency), true)
	}
	if s.callerStores {
		return Continue, nil
	}
	return Continue, s.save(ctx)
}

// StoreIn queues in p, the caller's transaction, the write of the session
// record (cookies, usage, score) or, when done, its deletion: a session
// of a manager that shares the caller's Redis (Config.SharesRedis) is
// stored this way with what its response gave. The caller runs p; Finish
// after a done StoreIn only releases the proxy.
func (s *Session) StoreIn(ctx context.Context, p redis.Pipeliner, done bool) error {
	if done {
		s.dropIn(ctx, p)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.snapshot()
	return s.m.store.saveIn(ctx, p, &rec)
}

// dropIn queues in p the deletion of the session's record, if one may be
// stored.
func (s *Session) dropIn(ctx context.Context, p redis.Pipeliner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stored || !s.callerStores { // as isStored
		p.Del(ctx, sessionKey(s.rec.Task))
	}
	s.stored = false
}

// snapshot is the record to store, with the jar's cookies; the caller
// stores it, so the session counts as stored. Under s.mu.
func (s *Session) snapshot() record {
	s.rec.Cookies = s.jar.snapshot()
	s.stored = true
	return *s.rec
}

// note applies the verdict to the health counters and says what follows.
func (s *Session) note(v detect.Verdict) (retire, pause bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.m.cfg.Clock.Now()
	s.lastDone = now
	s.rec.Usage++
	s.rec.Score = max(0, s.rec.Score+penalty(v))
	cfg := s.m.cfg
	retire = v.Kind == detect.Blocked || s.rec.Score >= cfg.MaxScore ||
		s.rec.Usage >= cfg.MaxUsage || now.Sub(s.rec.Created) >= cfg.MaxAge
	return retire, !retire && v.Kind == detect.RateLimited
}

func (s *Session) save(ctx context.Context) error {
	s.mu.Lock()
	rec := s.snapshot()
	s.mu.Unlock()
	return s.m.save(ctx, &rec)
}

// Close releases the proxy with outcome o and keeps the stored session, so
// a retry of the task resumes the same proxy and cookies.
func (s *Session) Close(ctx context.Context, o proxies.Outcome) error {
	return s.end(ctx, o, false)
}

// Finish releases the proxy with outcome o and drops the stored session:
// the task is done.
func (s *Session) Finish(ctx context.Context, o proxies.Outcome) error {
	return s.end(ctx, o, true)
}

// FinishIn is Finish queued in p, the caller's transaction on the
// sessions' Redis: the stored record's deletion and the proxy's release
// commit with the caller's own writes, in its round trip. It needs a
// broker that can release in a pipeline (Caps.PipelineReleases) and
// keeps its leases on that Redis (Config.BrokerSharesRedis); otherwise
// ok is false, nothing is queued, and the caller calls Finish after p.
// Once p has run, answer gives the release's answer (nil,
// proxies.ErrStaleLease, or the error of a release retried alone; a
// failure is logged and counted, as Finish's).
func (s *Session) FinishIn(ctx context.Context, p redis.Pipeliner, o proxies.Outcome) (answer func(context.Context) error, ok bool) {
	pr := s.m.cfg.Caps.PipelineReleases
	if pr == nil || !s.m.cfg.BrokerSharesRedis || s.isClosed() || s.holdsExit() {
		return nil, false
	}
	l := s.Lease()
	released, ok := pr.ReleaseIn(ctx, p, &l, s.evidence(o))
	if !ok || !s.shut() {
		return released, ok
	}
	s.dropIn(ctx, p)
	return func(ctx context.Context) error {
		err := released(ctx)
		s.m.noteRelease(s.rec.Task, &l, err)
		return err
	}, true
}

// shut marks the session closed and stops its keepAlive, so no extend
// follows the release; false if it was closed already.
func (s *Session) shut() bool {
	if !s.markClosed() {
		return false
	}
	close(s.stop)
	<-s.stopped
	return true
}

func (s *Session) end(ctx context.Context, o proxies.Outcome, drop bool) error {
	if !s.shut() {
		return nil
	}
	ctx = context.WithoutCancel(ctx) // release even when the job was cancelled
	var err error
	if drop {
		if s.isStored() {
			err = s.m.drop(ctx, s.rec.Task)
		}
	} else {
		err = s.save(ctx)
	}
	old := s.ExitIP()
	if o.Kind == proxies.OutcomeBanned {
		s.volumeBanned(ctx, old)
	}
	o = s.evidence(s.endExit(ctx, o))
	l := s.Lease()
	if why, ok := s.rotates(o); ok {
		return errors.Join(err, s.m.rotate(ctx, s.rec.Task, &l, o, old, why))
	}
	return errors.Join(err, s.m.release(ctx, s.rec.Task, &l, o))
}

// isStored says whether a record of the session may be in Redis. Only a
// session whose caller stores it knows it is not.
func (s *Session) isStored() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored || !s.callerStores
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Session) markClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.closed = true
	return true
}

// keepAlive extends the lease every third of its TTL until the session
// ends. A stale token marks the lease lost.
func (s *Session) keepAlive() {
	every := s.m.cfg.LeaseTTL / 3
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				if !s.extend() {
					return
				}
			}
		}
	}()
}

func (s *Session) extend() bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.m.cfg.LeaseTTL/3)
	defer cancel()
	l := s.Lease()
	sent := time.Now()
	nl, err := s.m.cfg.Broker.Extend(ctx, &l, s.m.cfg.LeaseTTL)
	if err == nil && !s.extendExit(ctx) {
		err = proxies.ErrStaleLease // the exit hold was lost: so is the right to send
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.lease, s.validUntil = nl, sent.Add(s.m.cfg.LeaseTTL)
	case errors.Is(err, proxies.ErrStaleLease):
		s.lost = true
		s.m.cfg.Logger.Warn("session lost its lease", zap.String("task", s.rec.Task), zap.String("proxy", l.Proxy.ID))
		return false
	default:
		s.m.cfg.Logger.Warn("extend lease", zap.String("task", s.rec.Task), zap.Error(err))
	}
	return true
}
