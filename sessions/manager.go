package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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
	// MaxLeaseWait bounds how long Open waits for a fresh proxy. Default 30s.
	MaxLeaseWait time.Duration
	// HandBack makes Open wait for a fresh proxy only while fewer of the
	// manager's sessions wait for the site and class than it has
	// proxies, and for at most MaxLeaseWait; otherwise it returns a
	// *WaitError with the task's turn in the site's wait line (a worker's
	// job then hands its slot back until its turn). Default false: Open
	// waits up to MaxLeaseWait.
	HandBack bool
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
	// SharesRedis says Redis is also the caller's (a worker keeps a job's
	// results and progress there), so sessions ride in the caller's
	// pipeline and MULTI: the caller reads a task's record with its own
	// reads (Preload) and writes it with what a response gave
	// (Session.StoreIn), so both land or neither; a session never writes
	// its record when it opens or on a response (Close and Finish still
	// store or drop it). Set by whoever builds the manager with the
	// caller's client. Default false: a session writes its record itself.
	SharesRedis bool
	// BrokerSharesRedis says the broker keeps its leases on Redis too, so
	// a fresh proxy's lease rides in Preload's pipeline and a release in
	// the caller's transaction (Session.FinishIn), when the broker can
	// (Caps.PipelineLeases, Caps.PipelineReleases). Set it only when it
	// does. Default false.
	BrokerSharesRedis bool
	// Caps are the broker's capabilities beyond proxies.Broker. Exits
	// holds the exit IPs of proxies that learn theirs (gateways, proxies
	// told to probe), so I1, I2 and I5 hold on the IP the site sees (nil:
	// such a proxy's session fails to open, ErrNoExitGate). Default:
	// Broker.Capabilities().
	Caps proxies.Capabilities
	// Rotator rotates modems (proxies with a change-IP link), the
	// worker's: on a ban, or the site's rotate_after, the modem changes
	// its exit IP instead of sitting out a quarantine. Nil: a modem is a
	// plain proxy (a ban quarantines it).
	Rotator *Rotator
	// Clock is the sessions' time. Default: the system's.
	Clock Clock
	// ExitProbe learns exit IPs; its URL is the IP-echo URL of proxies
	// that name none.
	ExitProbe fetcher.ExitProbe
	// ExitBusy is what a new gateway session does when its exit IP is
	// held by another session. Default ExitReroll.
	ExitBusy ExitPolicy
	// MaxRerolls bounds the new session ids taken for a held exit IP
	// before the session waits for one. Default 8.
	MaxRerolls int
	// Forget, if set, is told a gateway session's proxy URL once no
	// request will use it again (a new session id replaced it, or its
	// session ended): the worker drops its cached transport
	// (fetcher.Fetcher.Forget), which would otherwise keep connections
	// open for a session id nobody uses.
	Forget func(*url.URL)
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
	if c.ExitBusy == "" {
		c.ExitBusy = ExitReroll
	}
	if c.MaxRerolls == 0 {
		c.MaxRerolls = 8
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Caps == (proxies.Capabilities{}) && c.Broker != nil {
		c.Caps = c.Broker.Capabilities()
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
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
	// ExitCounts
	exitProbes, rerolls, exitWaits, exitChanges atomic.Int64
	// ModemCounts
	modemEnded atomic.Int64
	// volumeRested counts sessions ended because their exit IP had sent
	// its site's volume budget (volume.go).
	volumeRested atomic.Int64
	// waits are the jobs waiting in their slots for a proxy (leaseFresh).
	waits slotWaits
}

// NewManager builds a Manager.
func NewManager(cfg Config) *Manager {
	cfg.withDefaults()
	return &Manager{cfg: cfg, store: store{rdb: cfg.Redis, ttl: cfg.RecordTTL}}
}

// Redis is the client session records are stored with.
func (m *Manager) Redis() redis.UniversalClient { return m.cfg.Redis }

// SharesRedis reports Config.SharesRedis: the caller reads the sessions'
// records with its own reads (Preload) and writes them with its own
// writes (Session.StoreIn).
func (m *Manager) SharesRedis() bool { return m.cfg.SharesRedis }

// Open gives the task a session on site: the stored one if the task ran
// before and its proxy can be leased again (same IP, same cookies), else a
// fresh one with a new proxy of class, a new cookie jar and profile. It is
// OpenStored with nothing preloaded.
func (m *Manager) Open(ctx context.Context, task, site string, class proxies.Class) (*Session, error) {
	return m.OpenStored(ctx, Preloaded{}, task, site, class)
}

// OpenStored opens task's session as Open says, from what Preload read in
// the caller's pipeline (a zero Preloaded: it reads the record itself).
// A preloaded lease is the session's when it is a fresh proxy the
// session can take, or the stored session's own proxy; otherwise it goes
// back. Unless the caller stores the session (Config.SharesRedis), the
// session is stored at once.
func (m *Manager) OpenStored(ctx context.Context, pre Preloaded, task, site string, class proxies.Class) (*Session, error) {
	rec, err := m.recordOf(ctx, pre.Record, task)
	if err != nil {
		m.Discard(ctx, pre.Lease)
		return nil, err
	}
	l, resumed, err := m.lease(ctx, rec, m.preleased(ctx, pre.Lease, task, site, class), task, site, class)
	if err != nil {
		return nil, err
	}
	return m.start(ctx, rec, l, task, site, class, resumed)
}

// lease leases the session's proxy and says whether it resumes rec: rec's
// own proxy when rec is of site (pl, a preloaded lease, when it is on that
// proxy; else pl goes back); when that proxy cannot be had (busy,
// quarantined, gone, its lease stale) or there is no rec of site, a fresh
// proxy of class: pl, else the first to come free within MaxLeaseWait.
func (m *Manager) lease(ctx context.Context, rec *record, pl *proxies.Lease, task, site string, class proxies.Class) (*proxies.Lease, bool, error) {
	if rec != nil && rec.Site == site {
		if pl != nil && pl.Proxy.ID == rec.ProxyID {
			return pl, true, nil
		}
		m.giveBack(ctx, task, pl)
		pl = nil
		l, err := m.cfg.Broker.LeaseProxy(ctx, m.leaseRequest(rec.Site, "", rec.Task), rec.ProxyID)
		if err == nil || !canStartFresh(err) {
			return l, true, err
		}
		m.cfg.Logger.Info("session starts fresh", zap.String("task", task), zap.String("site", site), zap.Error(err))
	}
	if pl != nil {
		return pl, false, nil
	}
	if m.cfg.HandBack {
		l, err := m.leaseFresh(ctx, site, class, task)
		var w *WaitError
		if err != nil && !errors.As(err, &w) {
			err = fmt.Errorf("lease a %s proxy for %s: %w", class, site, err)
		}
		return l, false, err
	}
	wctx, cancel := context.WithTimeout(ctx, m.cfg.MaxLeaseWait)
	defer cancel()
	l, err := m.cfg.Broker.LeaseWait(wctx, m.leaseRequest(site, class, task))
	if err != nil {
		return nil, false, fmt.Errorf("lease a %s proxy for %s: %w", class, site, err)
	}
	return l, false, nil
}

// canStartFresh says whether a failed resume may fall back to a new proxy.
func canStartFresh(err error) bool {
	return errors.Is(err, proxies.ErrBusy) || errors.Is(err, proxies.ErrQuarantined) ||
		errors.Is(err, proxies.ErrUnknownProxy) || errors.Is(err, proxies.ErrStaleLease)
}

// leaseRequest is the broker request of this manager's holder for task
// on site, in class ("" for LeaseProxy, which leases the proxy's own).
func (m *Manager) leaseRequest(site string, class proxies.Class, task string) proxies.LeaseRequest {
	return proxies.LeaseRequest{Site: site, Class: class, Holder: m.cfg.Holder, Task: task, TTL: m.cfg.LeaseTTL}
}

// start starts the session on l: old resumed, else a new one (a new
// cookie jar and profile; an old record of the task is still there, so
// Finish drops it). Unless the caller stores it, the session is stored at
// once, so a retry after a crash resumes its proxy (taking over the dead
// holder's lease); a caller stores it with the first response's results,
// and a crash before those leaves the proxy leased until the lease's TTL.
func (m *Manager) start(ctx context.Context, old *record, l *proxies.Lease, task, site string, class proxies.Class, resumed bool) (*Session, error) {
	rec := old
	if resumed {
		rec.Attempts++
		rec.Holder = m.cfg.Holder
	} else {
		rec = m.newRecord(task, site, class, l)
	}
	s := newSession(m, rec, l, resumed)
	s.callerStores, s.stored = m.cfg.SharesRedis, old != nil
	if err := s.claimExit(ctx); err != nil {
		return nil, errors.Join(err, m.startFailed(ctx, rec.Task, l, err))
	}
	if !s.callerStores {
		if err := m.save(ctx, rec); err != nil {
			return nil, errors.Join(err, m.release(ctx, rec.Task, l, proxies.Neutral()))
		}
		s.stored = true
	}
	s.keepAlive()
	return s, nil
}

// newRecord is a new session's record: task's on site, leased on l, with
// the browser profile the task and proxy seed.
func (m *Manager) newRecord(task, site string, class proxies.Class, l *proxies.Lease) *record {
	rec := &record{Task: task, Site: site, Class: class, ProxyID: l.Proxy.ID,
		Profile: task + "|" + l.Proxy.ID, Created: time.Now(), Holder: m.cfg.Holder, Attempts: 1}
	browser := fetcher.ProfileFor(rec.Profile)
	rec.Browser = &browser
	return rec
}

// profileFor returns the session's profile: the stored one, or for a
// record without one the built-in profile its seed picks.
func profileFor(rec *record) fetcher.Profile {
	if rec.Browser != nil && !rec.Browser.IsZero() {
		return *rec.Browser
	}
	return fetcher.ProfileFor(rec.Profile)
}
