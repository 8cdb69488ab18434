package proxies

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Rotator changes modems' exit IPs across the cluster. A rotation starts
// from a live lease of the modem (so exactly one worker runs it), keeps
// every site from leasing the modem until it ends, lets the change link
// be called only when the provider allows it and no session holds the
// modem, and ends with the new IP or, failed, with today's quarantine.
type Rotator interface {
	// BeginRotation ends lease l of a modem and marks the modem rotating
	// for ttl (pushed by ExtendRotation). ErrRotationBusy: another
	// rotation of it is live (l ended all the same); ErrStaleLease: l
	// was not live.
	BeginRotation(ctx context.Context, l *Lease, ttl time.Duration) (*Rotation, error)
	// ExtendRotation pushes r's deadline to now+ttl; ErrStaleLease when
	// it is no longer live.
	ExtendRotation(ctx context.Context, r *Rotation, ttl time.Duration) error
	// MayChange records the change as made now and returns 0 when the
	// provider's least interval plus ChangeMargin has passed and no
	// session holds the modem; else how long to wait before asking
	// again. The interval is the modem's change_every, or the provider's
	// learned from its refusals where longer (Refused).
	MayChange(ctx context.Context, r *Rotation) (time.Duration, error)
	// Changed records r's change as accepted now: called once the link
	// answered, it moves MayChange's record (made before the call was
	// sent) to the latest moment the provider can have taken the call,
	// which its interval counts from.
	Changed(ctx context.Context, r *Rotation) error
	// Refused records that the link refused the call MayChange allowed
	// (429): nothing changed, and a Retry-After can teach the provider's
	// real interval (modem_limit.go).
	Refused(ctx context.Context, r *Rotation, f Refusal) (every time.Duration, learned bool, err error)
	// EndRotation ends r with its result.
	EndRotation(ctx context.Context, r *Rotation, res RotationResult) error
	// ModemSend asks whether a session holding exit ip may send a request
	// to site through modem p now, and counts it.
	ModemSend(ctx context.Context, p Proxy, site, ip string) (ModemAnswer, error)
	// ModemBanned tells that site banned exit ip carried by modem p:
	// with rotate_after auto, where the ban fell teaches the site's
	// volume budget (modem_limit.go).
	ModemBanned(ctx context.Context, p Proxy, site, ip string) error
	// ModemStats reads the pool's rotation figures.
	ModemStats(ctx context.Context) (ModemStats, error)
}

// ErrRotationBusy means the modem is already being rotated.
var ErrRotationBusy = errors.New("the modem is already changing its IP")

// Rotation is one modem's change of IP.
type Rotation struct {
	Proxy Proxy
	// Site and Class are the lease's the rotation began from: a failed
	// rotation quarantines the modem there.
	Site  string
	Class Class
	// Token fences the rotation like a lease's.
	Token int64
	// Began is when it began (Redis clock); NotBefore the first moment
	// the provider allows the change, with ChangeMargin.
	Began, NotBefore time.Time
	// permitted is the change MayChange last recorded (ms), previous the
	// record it replaced (0: none): Refused puts it back.
	permitted, previous int64
}

// RotationResult is how a rotation ended.
type RotationResult struct {
	// IP is the new exit IP; "" when the rotation failed.
	IP string
	// Took is the time from the ban (BeginRotation) to the new IP.
	Took time.Duration
}

// UseKept is how long the requests an exit IP sent a site are counted
// for rotate_after after the IP's first (rotate_every, when the site
// sets it): an IP a modem gets again within it goes on from its count.
const UseKept = time.Hour

// ModemAnswer is ModemSend's verdict.
type ModemAnswer int

// Modem answers.
const (
	// ModemSendOK: send; the request is counted.
	ModemSendOK ModemAnswer = iota
	// ModemRotating: the modem is changing its IP: send nothing.
	ModemRotating
	// ModemRotateFirst: the site's rotate_after or rotate_every is
	// reached on this IP: rotate before the next request.
	ModemRotateFirst
)

var _ Rotator = (*RedisBroker)(nil)

// keptFor is how long site's count of an exit IP's requests lasts after
// the IP's first: rotate_every when the site sets one, else UseKept.
func keptFor(sc SiteConfig) time.Duration {
	if sc.RotateEvery > 0 {
		return sc.RotateEvery
	}
	return UseKept
}

// send runs lua/modem_send.lua for a request ip is about to send site:
// through modem id with the site's rotate_after and rotate_every (and
// counted in the minute's modem total), or, not modem, with the learned
// budget of rotate_after auto only: a number given for modems to rotate
// by is theirs.
func (b *RedisBroker) send(ctx context.Context, id, site, ip string, modem bool) ([]any, error) {
	sc := b.cfg.site(site)
	minute := time.Now().Unix() / 60
	auto, counted, after, every := 0, 0, sc.RotateAfter, sc.RotateEvery
	if sc.RotateAfterAuto {
		auto = 1
	}
	if modem {
		counted = 1
	} else {
		after, every = 0, 0
	}
	return b.eval(ctx, modemSendScript, b.k.modemSendKeys(site, ip, minute), []any{b.cfg.skew(), id, after,
		every.Milliseconds(), keptFor(sc).Milliseconds(), auto, ip, VolumeLimitName(site), CanaryTimeout.Milliseconds(), counted})
}

// BeginRotation starts r from lease l (lua/rotate_begin.lua).
func (b *RedisBroker) BeginRotation(ctx context.Context, l *Lease, ttl time.Duration) (*Rotation, error) {
	p := l.Proxy
	if p.Modem == nil {
		return nil, fmt.Errorf("rotate %s: not a modem (no change=URL)", p.ID)
	}
	res, err := b.eval(ctx, rotateBeginScript, b.k.rotateBeginKeys(l.Site, p.Class, p.Modem.Provider()),
		[]any{b.cfg.skew(), p.ID, l.Token, holderArg(l.Holder), max(ttl.Milliseconds(), 1), p.Modem.Every.Milliseconds(), l.Site,
			ChangeMargin.Milliseconds()})
	if err != nil {
		return nil, fmt.Errorf("rotate %s: %w", p.ID, err)
	}
	switch num(res[0]) {
	case 1:
		return &Rotation{Proxy: p, Site: l.Site, Class: p.Class, Token: num(res[1]),
			Began: ms(num(res[2])), NotBefore: ms(num(res[4]))}, nil
	case 0:
		return nil, fmt.Errorf("rotate %s: %w", p.ID, ErrRotationBusy)
	}
	return nil, fmt.Errorf("rotate %s (lease %d): %w", p.ID, l.Token, ErrStaleLease)
}

// ExtendRotation pushes r's deadline (lua/rotate_extend.lua).
func (b *RedisBroker) ExtendRotation(ctx context.Context, r *Rotation, ttl time.Duration) error {
	res, err := b.eval(ctx, rotateExtendScript, b.k.rotateExtendKeys(), []any{b.cfg.skew(), r.Proxy.ID, r.Token, max(ttl.Milliseconds(), 1)})
	if err != nil {
		return fmt.Errorf("extend rotation of %s: %w", r.Proxy.ID, err)
	}
	if num(res[0]) != 1 {
		return fmt.Errorf("extend rotation of %s (%d): %w", r.Proxy.ID, r.Token, ErrStaleLease)
	}
	return nil
}

// MayChange asks lua/rotate_change.lua whether the link may be called.
func (b *RedisBroker) MayChange(ctx context.Context, r *Rotation) (time.Duration, error) {
	md := r.Proxy.Modem
	res, err := b.eval(ctx, rotateChangeScript, b.k.rotateChangeKeys(md.Provider()), []any{b.cfg.skew(), r.Proxy.ID, r.Token,
		md.Every.Milliseconds(), ChangeMargin.Milliseconds()})
	if err != nil {
		return 0, fmt.Errorf("change IP of %s: %w", r.Proxy.ID, err)
	}
	switch num(res[0]) {
	case 1:
		r.permitted, r.previous = num(res[1]), num(res[2])
		return 0, nil
	case 0:
		return max(time.Duration(num(res[2])-num(res[3]))*time.Millisecond, time.Millisecond), nil
	}
	return 0, fmt.Errorf("change IP of %s (%d): %w", r.Proxy.ID, r.Token, ErrStaleLease)
}

// Changed moves the modem's last change to now (lua/rotate_changed.lua).
func (b *RedisBroker) Changed(ctx context.Context, r *Rotation) error {
	if _, err := b.eval(ctx, rotateChangedScript, b.k.rotateChangedKeys(), []any{b.cfg.skew(), r.Proxy.ID}); err != nil {
		return fmt.Errorf("record the change of %s: %w", r.Proxy.ID, err)
	}
	return nil
}

// EndRotation ends r (lua/rotate_end.lua): a failed one quarantines the
// modem on its site for a first ban's time.
func (b *RedisBroker) EndRotation(ctx context.Context, r *Rotation, res RotationResult) error {
	ok, q := 1, time.Duration(0)
	if res.IP == "" {
		sc := b.cfg.site(r.Site)
		ok, q = 0, sc.QuarantineFloor+time.Duration(b.cfg.Rand()*float64(sc.QuarantineBase-sc.QuarantineFloor))
	}
	out, err := b.eval(ctx, rotateEndScript, b.k.rotateEndKeys(r.Site, r.Class),
		[]any{b.cfg.skew(), r.Proxy.ID, r.Token, ok, res.IP, max(q.Milliseconds(), 1), res.Took.Milliseconds()})
	if err != nil {
		return fmt.Errorf("end rotation of %s: %w", r.Proxy.ID, err)
	}
	if num(out[0]) != 1 {
		return fmt.Errorf("end rotation of %s (%d): %w", r.Proxy.ID, r.Token, ErrStaleLease)
	}
	return nil
}

// ModemSend asks lua/modem_send.lua, with site's rotate_after and
// rotate_every.
func (b *RedisBroker) ModemSend(ctx context.Context, p Proxy, site, ip string) (ModemAnswer, error) {
	res, err := b.send(ctx, p.ID, site, ip, true)
	if err != nil {
		return ModemSendOK, fmt.Errorf("modem %s on %s: %w", p.ID, site, err)
	}
	switch num(res[0]) {
	case 0:
		return ModemRotating, nil
	case 2:
		return ModemRotateFirst, nil
	}
	return ModemSendOK, nil
}
