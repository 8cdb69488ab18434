package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/internal/mask"
	"crawlq/proxies"
)

// RotatorConfig configures a Rotator. Zero fields take the defaults named.
type RotatorConfig struct {
	// Rotations is the broker's rotation state (proxies.Capabilities'
	// Rotations): who may rotate a modem, when its link may be called,
	// its new IP. Required.
	Rotations proxies.Rotator
	// LeaseTTL is how long a rotation's mark lives unless pushed (every
	// third of it): a worker that dies mid-rotation frees the modem
	// within it. Default 30s.
	LeaseTTL time.Duration
	// ExitProbe learns a modem's new exit IP; its URL is the IP echo of
	// modems whose line names none.
	ExitProbe fetcher.ExitProbe
	// ChangeClient calls the change links. Default: a client with a 15 s
	// timeout that uses no proxy.
	ChangeClient *http.Client
	// Forget, if set, is told a modem's URL once its link answered: the
	// modem dropped every connection (fetcher.Fetcher.Forget).
	Forget func(*url.URL)
	// Clock is the rotator's time. Default: the system's.
	Clock Clock
	// Logger logs each rotation. Default zap.NewNop().
	Logger *zap.Logger
}

// Clock is the time of a rotator (and of a session manager): now, and
// waits that end early with their context.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (then returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the system's time.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Rotator changes modems' exit IPs for a worker: from a session's ban (or
// its site's rotate_after) to the new IP stored in the broker. Begin
// takes the modem from the session's lease and runs the rotation in the
// background: ask the broker until the change is allowed, call the
// change link (a 429 waits its Retry-After), let the modem settle, probe
// until the exit IP is a new one, and end the rotation with it (failed:
// the modem is quarantined). Start opens it, Shutdown closes it; one per
// worker, shared by its sessions.
type Rotator struct {
	cfg RotatorConfig

	mu       sync.Mutex
	open     bool
	running  sync.WaitGroup
	quit     chan struct{} // closed by Shutdown's timeout: running rotations stop
	quitOnce sync.Once

	rotations, failed, refused, probes atomic.Int64
}

// ErrRotatorClosed means a rotation was asked of a rotator not started,
// or shut down: the caller releases the modem's lease itself.
var ErrRotatorClosed = errors.New("the modem rotator is not running")

// NewRotator builds a Rotator; Start opens it.
func NewRotator(cfg RotatorConfig) *Rotator {
	setDur(&cfg.LeaseTTL, 30*time.Second)
	if cfg.ChangeClient == nil {
		cfg.ChangeClient = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Rotator{cfg: cfg, quit: make(chan struct{})}
}

// Start opens the rotator for Begin.
func (r *Rotator) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open = true
}

// Shutdown closes the rotator and waits up to timeout for its rotations:
// one cut short leaves its modem to free itself within the lease TTL.
func (r *Rotator) Shutdown(timeout time.Duration) {
	r.mu.Lock()
	r.open = false
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.running.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.quitOnce.Do(func() { close(r.quit) })
		<-done
	}
}

// Counts are the rotator's figures: rotations to a new IP, failed ones
// (quarantined instead), change calls the provider refused (429).
func (r *Rotator) Counts() (rotations, failed, refused int64) {
	return r.rotations.Load(), r.failed.Load(), r.refused.Load()
}

// Begin ends lease l of a modem by starting its rotation away from exit
// IP old (why: "ban", "rotate_after", "banned IP"), run in the
// background, so the job goes on at once through a new session. A
// rotation already going, or a lease no longer live, needs nothing
// more; an error means none started and the caller releases l itself.
func (r *Rotator) Begin(ctx context.Context, l *proxies.Lease, old, why string) error {
	if !r.enter() {
		return ErrRotatorClosed
	}
	began := r.cfg.Clock.Now()
	rot, err := r.cfg.Rotations.BeginRotation(ctx, l, r.cfg.LeaseTTL)
	if err != nil {
		r.running.Done()
		if errors.Is(err, proxies.ErrRotationBusy) || errors.Is(err, proxies.ErrStaleLease) {
			return nil
		}
		return err
	}
	r.cfg.Logger.Info("modem rotating", zap.String("proxy", l.Proxy.ID), zap.String("site", l.Site),
		zap.String("old_ip", old), zap.String("why", why))
	go r.run(rot, old, began)
	return nil
}

// enter counts a rotation in, if the rotator is open.
func (r *Rotator) enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open {
		r.running.Add(1)
	}
	return r.open
}

// run changes the modem's IP, its mark kept alive meanwhile, and ends the
// rotation with the new IP, or failed. A rotation cut short by Shutdown
// leaves it: its mark frees the modem within the lease TTL.
func (r *Rotator) run(rot *proxies.Rotation, old string, began time.Time) {
	defer r.running.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kept := r.keepMarked(ctx, cancel, rot)
	ip, err := r.change(ctx, rot, old)
	cancel()
	<-kept
	select {
	case <-r.quit:
		return // shut down
	default:
	}
	log := r.cfg.Logger.With(zap.String("proxy", rot.Proxy.ID), zap.String("site", rot.Site))
	res := proxies.RotationResult{IP: ip, Took: r.cfg.Clock.Now().Sub(began)}
	if err != nil {
		res.IP = ""
		r.failed.Add(1)
		log.Warn("modem rotation failed: quarantined", zap.Error(err))
	} else {
		r.rotations.Add(1)
		log.Info("modem rotated", zap.String("old_ip", old), zap.String("ip", ip), zap.Duration("took", res.Took))
	}
	ectx, ecancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ecancel()
	if err := r.cfg.Rotations.EndRotation(ectx, rot, res); err != nil {
		log.Warn("modem rotation end failed", zap.Error(err))
	}
}

// keepMarked pushes the rotation's mark every third of the lease TTL
// until ctx ends; a mark lost (the rotation outlived it) or Shutdown's
// timeout cancels. done is closed when it stopped.
func (r *Rotator) keepMarked(ctx context.Context, cancel context.CancelFunc, rot *proxies.Rotation) (done <-chan struct{}) {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-r.quit:
				cancel()
				return
			case <-ctx.Done():
				return
			case <-r.after(ctx, r.cfg.LeaseTTL/3):
			}
			if err := r.cfg.Rotations.ExtendRotation(ctx, rot, r.cfg.LeaseTTL); errors.Is(err, proxies.ErrStaleLease) {
				cancel()
			}
		}
	}()
	return out
}

// after is a channel closed d from now on the rotator's clock, or when
// ctx ends.
func (r *Rotator) after(ctx context.Context, d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	go func() { _ = r.cfg.Clock.Sleep(ctx, d); close(c) }()
	return c
}

// change waits until the change is allowed and calls the modem's link
// until it takes the call, records when it answered (the provider's
// interval counts from its taking the call, later than the permission),
// lets the modem settle and learns its new IP.
func (r *Rotator) change(ctx context.Context, rot *proxies.Rotation, old string) (string, error) {
	if err := r.changeAccepted(ctx, rot); err != nil {
		return "", err
	}
	if err := r.cfg.Rotations.Changed(ctx, rot); err != nil {
		r.cfg.Logger.Warn("modem change not recorded: the next may come too soon", zap.String("proxy", rot.Proxy.ID), zap.Error(err))
	}
	if r.cfg.Forget != nil {
		r.cfg.Forget(rot.Proxy.URL()) // the modem dropped every connection
	}
	ctx, cancel := context.WithTimeout(ctx, rot.Proxy.Modem.NewIPTimeout()+time.Second)
	defer cancel()
	if err := r.cfg.Clock.Sleep(ctx, rot.Proxy.Modem.Settle+settleMargin); err != nil {
		return "", err
	}
	return r.newIP(ctx, rot.Proxy, old)
}

// changeAccepted waits for the broker's permission and calls the link,
// again after each refusal (429) up to maxRefusals: the refusal is told
// to the broker, which puts the modem's last change back and learns the
// provider's interval from its Retry-After, and the rotator waits the
// Retry-After before it asks again.
func (r *Rotator) changeAccepted(ctx context.Context, rot *proxies.Rotation) error {
	for n := 1; ; n++ {
		if err := r.awaitChange(ctx, rot); err != nil {
			return err
		}
		f, err := r.callChange(ctx, rot.Proxy)
		if err != nil || f == nil {
			return err
		}
		r.refused.Add(1)
		every, learned, err := r.cfg.Rotations.Refused(ctx, rot, *f)
		if err != nil {
			r.cfg.Logger.Warn("modem change refusal not recorded", zap.String("proxy", rot.Proxy.ID), zap.Error(err))
		} else if learned {
			r.cfg.Logger.Info("modem provider's interval learned", zap.String("proxy", rot.Proxy.ID),
				zap.String("provider", rot.Proxy.Modem.Provider()), zap.Duration("every", every))
		}
		if n == maxRefusals {
			return fmt.Errorf("change link %s refused %d calls", rot.Proxy.Modem.Masked(), n)
		}
		if err := r.cfg.Clock.Sleep(ctx, f.RetryAfter); err != nil {
			return err
		}
	}
}

// maxRefusals is how many refused calls a rotation makes before it fails.
const maxRefusals = 3

// settleMargin is added to the provider's settle time before the first
// probe of the new IP.
const settleMargin = 100 * time.Millisecond

// awaitChange asks until the change may be made: the provider's interval
// since the modem's last change, and the modem's sessions on other sites
// ended (they end at their next request). It waits at most the interval
// plus two lease TTLs.
func (r *Rotator) awaitChange(ctx context.Context, rot *proxies.Rotation) error {
	limit := rot.NotBefore.Sub(r.cfg.Clock.Now()) + 2*r.cfg.LeaseTTL
	ctx, cancel := context.WithTimeout(ctx, max(limit, r.cfg.LeaseTTL))
	defer cancel()
	for {
		wait, err := r.cfg.Rotations.MayChange(ctx, rot)
		if err != nil || wait == 0 {
			return err
		}
		if err := r.cfg.Clock.Sleep(ctx, min(wait, changePoll)); err != nil {
			return fmt.Errorf("the modem's change was not allowed in time: %w", err)
		}
	}
}

// changePoll is how often a rotation asks again whether it may change.
const changePoll = 250 * time.Millisecond

// callChange calls the modem's change link: nil when it took the call,
// its refusal when it answered 429; a transport error is tried up to
// twice more after 1 s and 2 s.
func (r *Rotator) callChange(ctx context.Context, p proxies.Proxy) (*proxies.Refusal, error) {
	md := p.Modem
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, md.Method, md.ChangeURL, nil)
		if err != nil {
			return nil, fmt.Errorf("change link %s: %v", md.Masked(), mask.Text(err.Error(), md.ChangeURL))
		}
		resp, err := r.cfg.ChangeClient.Do(req)
		switch {
		case err != nil && (try >= 3 || ctx.Err() != nil):
			return nil, fmt.Errorf("change link %s: %v", md.Masked(), mask.Text(err.Error(), md.ChangeURL))
		case err != nil:
			if err := r.cfg.Clock.Sleep(ctx, time.Duration(try)*time.Second); err != nil {
				return nil, err
			}
			continue
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode/100 == 2:
			return nil, nil
		case resp.StatusCode == http.StatusTooManyRequests:
			f := retryAfter(resp.Header.Get("Retry-After"), r.cfg.Clock.Now())
			return &f, nil
		}
		return nil, fmt.Errorf("change link %s answered %s", md.Masked(), resp.Status)
	}
}

// retryAfter reads a Retry-After, in seconds or an HTTP date (read at
// now); unreadable or absent, a wait of 5 s that teaches nothing.
func retryAfter(v string, now time.Time) proxies.Refusal {
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return proxies.Refusal{RetryAfter: time.Duration(n) * time.Second, Given: true}
	}
	if t, err := http.ParseTime(v); err == nil {
		return proxies.Refusal{RetryAfter: max(t.Sub(now), 0), Given: true}
	}
	return proxies.Refusal{RetryAfter: 5 * time.Second}
}

// newIP probes the modem until its exit IP differs from old, backing off
// while it refuses (still settling), until ctx ends.
func (r *Rotator) newIP(ctx context.Context, p proxies.Proxy, old string) (string, error) {
	wait := 200 * time.Millisecond
	var last error
	for {
		r.probes.Add(1)
		ip, err := learnIP(ctx, r.cfg.ExitProbe, p, p.URL())
		switch {
		case err == nil && ip != old:
			return ip, nil
		case err == nil:
			last = fmt.Errorf("the exit IP is still %s", old)
		default:
			last = err
		}
		if err := r.cfg.Clock.Sleep(ctx, wait); err != nil {
			return "", fmt.Errorf("no new exit IP in %s: %w", p.Modem.NewIPTimeout(), last)
		}
		wait = min(2*wait, 2*time.Second)
	}
}
