package sessions

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/proxies"
)

// Config configures a Manager. Zero fields take the defaults named.
type Config struct {
	// Broker leases the proxies. Required.
	Broker proxies.Broker
	// Redis stores session records. Required.
	Redis redis.UniversalClient
	// Holder names this server/worker in leases. Default "crawlq".
	Holder string
	// LeaseTTL is the lease's time to live, kept alive while open. Default 30s.
	LeaseTTL time.Duration
	// RecordTTL is how long a stored session outlives its last use. Default 30m.
	RecordTTL time.Duration
	// MaxLeaseWait bounds how long Open waits for a free proxy. Default 30s.
	MaxLeaseWait time.Duration
	// ConfirmWait bounds how long Confirm waits for a second proxy while
	// it holds the session's own. Default: two of the site's min_intervals.
	ConfirmWait time.Duration
	// UnconfirmedHold is how long a proxy whose Suspect answer stayed
	// unconfirmed cools down. Default DefaultUnconfirmedHold (30s).
	UnconfirmedHold time.Duration
	// MaxScore retires a session at this error score. Default 3.
	MaxScore float64
	// MaxUsage retires a session after this many responses. Default 50.
	MaxUsage int
	// MaxAge retires a session this long after it was created. Default 30m.
	MaxAge time.Duration
	// Shape says how a request to a URL of a site goes out (a page or the
	// site's API call, its own headers). Default: every request a page.
	Shape func(site, rawURL string) Shape
	// Logger logs lease trouble, and each failed lease release or session
	// store with its task. Default zap.NewNop().
	Logger *zap.Logger
}

func (c *Config) withDefaults() {
	if c.Holder == "" {
		c.Holder = "crawlq"
	}
	setDur(&c.LeaseTTL, 30*time.Second)
	setDur(&c.RecordTTL, 30*time.Minute)
	setDur(&c.MaxLeaseWait, 30*time.Second)
	setDur(&c.UnconfirmedHold, DefaultUnconfirmedHold)
	setDur(&c.MaxAge, 30*time.Minute)
	if c.MaxScore == 0 {
		c.MaxScore = 3
	}
	if c.MaxUsage == 0 {
		c.MaxUsage = 50
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// Manager opens sessions for tasks.
type Manager struct {
	cfg   Config
	store store

	releaseErrs, storeErrs atomic.Int64 // ReleaseErrors, StoreErrors
}

// NewManager builds a Manager.
func NewManager(cfg Config) *Manager {
	cfg.withDefaults()
	return &Manager{cfg: cfg, store: store{rdb: cfg.Redis, ttl: cfg.RecordTTL}}
}

// Open gives the task a session on site: the stored one if the task ran
// before and its proxy can be leased again (same IP, same cookies), else a
// fresh one with a new proxy of class, a new cookie jar and profile.
func (m *Manager) Open(ctx context.Context, task, site string, class proxies.Class) (*Session, error) {
	rec, err := m.store.load(ctx, task)
	if err != nil {
		return nil, err
	}
	return m.open(ctx, rec, task, site, class, false)
}

// Redis is the client session records are stored with.
func (m *Manager) Redis() redis.UniversalClient { return m.cfg.Redis }

// Stored is a task's session record read queued in a caller's pipeline,
// so it shares a round trip with the caller's own reads.
type Stored struct {
	task string
	cmd  *redis.StringCmd
	// lease answers a fresh lease queued with the read (PreloadLease),
	// for site and class; m gives it back if unused.
	lease func(context.Context) (*proxies.Lease, error)
	m     *Manager
	site  string
	class proxies.Class
}

// Preload queues the read of task's stored session in p; after p runs,
// OpenStored opens from it.
func (m *Manager) Preload(ctx context.Context, p redis.Pipeliner, task string) *Stored {
	return &Stored{task: task, cmd: p.Get(ctx, sessionKey(task))}
}

// OpenStored opens task's session as Open does, from a Preload (nil: it
// reads the record itself), for a caller that stores the session with its
// own writes: the session never writes its record on a response; the
// caller queues it with StoreIn in the transaction that saves what the
// response gave (a job's items and progress), so both land or neither.
// Close and Finish still store or drop the record themselves.
func (m *Manager) OpenStored(ctx context.Context, st *Stored, task, site string, class proxies.Class) (*Session, error) {
	var rec *record
	var err error
	if st != nil && st.task == task {
		rec, err = decodeRecord(task, st.cmd)
	} else {
		rec, err = m.store.load(ctx, task)
	}
	if err != nil {
		st.Discard(ctx)
		return nil, err
	}
	if s, ok, err := m.openPreleased(ctx, st, rec, task, site, class); ok {
		return s, err
	}
	return m.open(ctx, rec, task, site, class, true)
}

func (m *Manager) open(ctx context.Context, rec *record, task, site string, class proxies.Class, callerStores bool) (*Session, error) {
	if rec != nil && rec.Site == site {
		s, err := m.resume(ctx, rec, callerStores)
		if err == nil || !canStartFresh(err) {
			return s, err
		}
		m.cfg.Logger.Info("session starts fresh", zap.String("task", task), zap.String("site", site), zap.Error(err))
	}
	s, err := m.fresh(ctx, task, site, class, callerStores)
	if s != nil && rec != nil {
		s.stored = true // the old record is still there: Finish drops it
	}
	return s, err
}

// canStartFresh says whether a failed resume may fall back to a new proxy.
func canStartFresh(err error) bool {
	return errors.Is(err, proxies.ErrBusy) || errors.Is(err, proxies.ErrQuarantined) ||
		errors.Is(err, proxies.ErrUnknownProxy) || errors.Is(err, proxies.ErrStaleLease)
}

func (m *Manager) resume(ctx context.Context, rec *record, callerStores bool) (*Session, error) {
	l, err := m.cfg.Broker.LeaseProxy(ctx, m.leaseRequest(rec.Site, "", rec.Task), rec.ProxyID)
	if err != nil {
		return nil, err
	}
	return m.resumeOn(ctx, rec, l, callerStores)
}

// resumeOn resumes rec's session on l, a lease of its proxy.
func (m *Manager) resumeOn(ctx context.Context, rec *record, l *proxies.Lease, callerStores bool) (*Session, error) {
	rec.Attempts++
	rec.Holder = m.cfg.Holder
	return m.start(ctx, rec, l, true, callerStores)
}

// leaseRequest is the broker request of this manager's holder for task
// on site, in class ("" for LeaseProxy, which leases the proxy's own).
func (m *Manager) leaseRequest(site string, class proxies.Class, task string) proxies.LeaseRequest {
	return proxies.LeaseRequest{Site: site, Class: class, Holder: m.cfg.Holder, Task: task, TTL: m.cfg.LeaseTTL}
}

func (m *Manager) fresh(ctx context.Context, task, site string, class proxies.Class, callerStores bool) (*Session, error) {
	wctx, cancel := context.WithTimeout(ctx, m.cfg.MaxLeaseWait)
	defer cancel()
	l, err := m.cfg.Broker.LeaseWait(wctx, m.leaseRequest(site, class, task))
	if err != nil {
		return nil, fmt.Errorf("lease a %s proxy for %s: %w", class, site, err)
	}
	return m.freshWith(ctx, l, task, site, class, callerStores)
}

// freshWith starts a new session on lease l.
func (m *Manager) freshWith(ctx context.Context, l *proxies.Lease, task, site string, class proxies.Class, callerStores bool) (*Session, error) {
	rec := &record{Task: task, Site: site, Class: class, ProxyID: l.Proxy.ID,
		Profile: task + "|" + l.Proxy.ID, Created: time.Now(), Holder: m.cfg.Holder, Attempts: 1}
	browser := fetcher.ProfileFor(rec.Profile)
	rec.Browser = &browser
	return m.start(ctx, rec, l, false, callerStores)
}

// start stores the session at once, so a retry after a crash resumes its
// proxy (taking over the dead holder's lease), unless the caller stores
// it: then it is stored with the first response's results, and a crash
// before those leaves the proxy leased until the lease's TTL.
func (m *Manager) start(ctx context.Context, rec *record, l *proxies.Lease, resumed, callerStores bool) (*Session, error) {
	s := newSession(m, rec, l, resumed)
	s.callerStores, s.stored = callerStores, resumed
	if !callerStores {
		if err := m.save(ctx, rec); err != nil {
			return nil, errors.Join(err, m.release(ctx, rec.Task, l, proxies.Neutral()))
		}
		s.stored = true
	}
	s.keepAlive()
	return s, nil
}

// profileFor returns the session's profile: the stored one, or for a
// record without one the built-in profile its seed picks.
func profileFor(rec *record) fetcher.Profile {
	if rec.Browser != nil && !rec.Browser.IsZero() {
		return *rec.Browser
	}
	return fetcher.ProfileFor(rec.Profile)
}
