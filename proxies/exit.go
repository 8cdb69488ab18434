package proxies

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ExitGate keeps I1, I2 and I5 on the IP a site sees when one endpoint
// can reach it from many IPs (a gateway) or several endpoints from one
// (two gateway sessions drawn onto the same exit): besides the lease of
// the endpoint, a session holds its exit IP for the site. A hold is
// exclusive per (IP, site) across the cluster (I1), the next hold may
// send only min_interval after the last one released (I2), and a ban seen
// through any session quarantines the IP for the site (I5).
type ExitGate interface {
	// HoldExit holds r.IP for r.Site. It fails with *ExitRefusedError
	// (wrapping ErrExitBusy or ErrExitQuarantined) saying until when.
	HoldExit(ctx context.Context, r ExitRequest) (*ExitHold, error)
	// ExtendExit pushes a live hold's expiry to now+ttl; ErrStaleLease
	// when it is no longer live.
	ExtendExit(ctx context.Context, h *ExitHold, ttl time.Duration) (*ExitHold, error)
	// ReleaseExit ends a hold: the IP rests the site's min_interval.
	ReleaseExit(ctx context.Context, h *ExitHold) error
	// BanExit quarantines ip for site, ending hold h if it is still
	// live (h may be nil: a ban seen without a hold).
	BanExit(ctx context.Context, site, ip string, h *ExitHold) (time.Time, error)
	// ExitStats counts the live holds and quarantined exit IPs of site.
	ExitStats(ctx context.Context, site string) (ExitStats, error)
}

// ExitRequest is what HoldExit is asked for.
type ExitRequest struct {
	Site, IP string
	// Holder names the session (its task) for the stats and logs.
	Holder string
	// Slot is the gateway slot (proxy ID) the session is on, "" for
	// none: the broker then leases the slot only when this IP is free
	// and ready for the site, pacing it by the exit it lands on.
	Slot string
	// TTL is how long the hold lasts unless extended; at least 1ms.
	TTL time.Duration
}

// ExitHold is a session's exclusive right to send to Site from IP.
type ExitHold struct {
	Site, IP, Holder string
	// Token fences the hold like a lease's.
	Token   int64
	Expires time.Time
	// NotBefore is when the IP may first send to Site (I2).
	NotBefore time.Time
}

// ExitStats are the exit-IP figures of one site.
type ExitStats struct {
	// Held counts the holds recorded (a dead holder's hold counts until
	// its IP is held again); Quarantined the IPs quarantined now; Seen
	// the distinct exit IPs ever held (estimated, within 1 %).
	Held        int64 `json:"held"`
	Quarantined int64 `json:"quarantined"`
	Seen        int64 `json:"seen"`
}

// Errors of the exit gate; check with errors.Is.
var (
	ErrExitBusy        = errors.New("exit IP is held by another session")
	ErrExitQuarantined = errors.New("exit IP is quarantined for the site")
)

// ExitRefusedError is a refused hold: by whom and until when.
type ExitRefusedError struct {
	Site, IP string
	// Quarantined: the IP is banned for the site; else another session
	// holds it.
	Quarantined bool
	Until       time.Time
	// Wait is how long from the broker's now until then.
	Wait time.Duration
}

func (e *ExitRefusedError) Error() string {
	return fmt.Sprintf("exit %s on %s until %s: %v", e.IP, e.Site, e.Until.UTC().Format(time.RFC3339Nano), e.Unwrap())
}

// Unwrap lets errors.Is match ErrExitBusy or ErrExitQuarantined.
func (e *ExitRefusedError) Unwrap() error {
	if e.Quarantined {
		return ErrExitQuarantined
	}
	return ErrExitBusy
}

var _ ExitGate = (*RedisBroker)(nil)

// HoldExit holds r.IP for r.Site (lua/exit_hold.lua).
func (b *RedisBroker) HoldExit(ctx context.Context, r ExitRequest) (*ExitHold, error) {
	mi := b.cfg.site(r.Site).MinInterval
	res, err := b.eval(ctx, exitHoldScript, b.k.exitHoldKeys(r.Site),
		[]any{b.cfg.skew(), r.IP, r.Holder, max(r.TTL.Milliseconds(), 1), mi.Milliseconds(), r.Slot})
	if err != nil {
		return nil, fmt.Errorf("hold exit %s on %s: %w", r.IP, r.Site, err)
	}
	if num(res[0]) == 1 {
		return exitHeld(r.Site, r.IP, r.Holder, res), nil
	}
	until := num(res[2])
	return nil, &ExitRefusedError{Site: r.Site, IP: r.IP, Quarantined: res[1] == "quarantined",
		Until: ms(until), Wait: time.Duration(until-num(res[3])) * time.Millisecond}
}

// ExtendExit renews h for ttl (lua/exit_renew.lua).
func (b *RedisBroker) ExtendExit(ctx context.Context, h *ExitHold, ttl time.Duration) (*ExitHold, error) {
	res, err := b.eval(ctx, exitRenewScript, b.k.exitRenewKeys(h.Site),
		[]any{b.cfg.skew(), h.IP, h.Token, max(ttl.Milliseconds(), 1)})
	if err != nil {
		return nil, fmt.Errorf("hold exit %s on %s: %w", h.IP, h.Site, err)
	}
	if num(res[0]) != 1 {
		return nil, fmt.Errorf("renew exit %s on %s (hold %d): %w", h.IP, h.Site, h.Token, ErrStaleLease)
	}
	return exitHeld(h.Site, h.IP, h.Holder, res), nil
}

// exitHeld is the hold of ip on site for holder that exit_hold.lua's or
// exit_renew.lua's reply res grants.
func exitHeld(site, ip, holder string, res []any) *ExitHold {
	return &ExitHold{Site: site, IP: ip, Holder: holder, Token: num(res[1]),
		Expires: ms(num(res[3])), NotBefore: ms(num(res[4]))}
}

// ReleaseExit ends h (lua/exit_release.lua).
func (b *RedisBroker) ReleaseExit(ctx context.Context, h *ExitHold) error {
	mi := b.cfg.site(h.Site).MinInterval
	res, err := b.eval(ctx, exitReleaseScript, b.k.exitReleaseKeys(h.Site),
		[]any{b.cfg.skew(), h.IP, h.Token, mi.Milliseconds()})
	if err != nil {
		return fmt.Errorf("release exit %s on %s: %w", h.IP, h.Site, err)
	}
	if num(res[0]) != 1 {
		return fmt.Errorf("release exit %s on %s (hold %d): %w", h.IP, h.Site, h.Token, ErrStaleLease)
	}
	return nil
}

// BanExit quarantines ip for site (lua/exit_ban.lua) for a time drawn
// like a first ban's: uniform between the site's quarantine floor and
// base.
func (b *RedisBroker) BanExit(ctx context.Context, site, ip string, h *ExitHold) (time.Time, error) {
	sc := b.cfg.site(site)
	d := sc.QuarantineFloor + time.Duration(b.cfg.Rand()*float64(sc.QuarantineBase-sc.QuarantineFloor))
	var tok int64
	if h != nil {
		tok = h.Token
	}
	res, err := b.eval(ctx, exitBanScript, b.k.exitBanKeys(site), []any{b.cfg.skew(), ip, tok, max(d.Milliseconds(), 1)})
	if err != nil {
		return time.Time{}, fmt.Errorf("ban exit %s on %s: %w", ip, site, err)
	}
	return ms(num(res[0])), nil
}

// ExitStats counts site's holds and quarantined exit IPs.
func (b *RedisBroker) ExitStats(ctx context.Context, site string) (ExitStats, error) {
	now, err := b.rdb.Time(ctx).Result()
	if err != nil {
		return ExitStats{}, err
	}
	p := b.rdb.Pipeline()
	held := p.HLen(ctx, b.k.exitHolds(site))
	quar := p.ZCount(ctx, b.k.exitQuarantine(site), fmt.Sprint(now.UnixMilli()+b.cfg.skew()), "+inf")
	seen := p.PFCount(ctx, b.k.exitSeen(site))
	if _, err := p.Exec(ctx); err != nil {
		return ExitStats{}, err
	}
	return ExitStats{Held: held.Val(), Quarantined: quar.Val(), Seen: seen.Val()}, nil
}
