package proxies

import (
	"context"
	"fmt"
	"time"
)

// VolumeGate keeps a site's learned volume budget per exit IP
// (rotate_after: auto) for proxies that cannot change their IP: a modem
// rotates when its IP has sent the budget (ModemSend); any other proxy,
// or a gateway's exit, rests instead until the IP's count starts over,
// and the job takes another. The count is the IP's, shared with modems
// (a site counts by the IP it sees), and a ban of such an IP teaches the
// budget as a modem's does. A number given to rotate_after, and
// rotate_every, are how often modems rotate: a proxy that cannot rotate
// keeps only the site's budget (rotate_every still the window its count
// starts over after).
type VolumeGate interface {
	// VolumeSend counts a request ip is about to send site; rest > 0
	// says the IP has sent its budget and must rest that long instead
	// (the request is not counted, and must not be sent).
	VolumeSend(ctx context.Context, site, ip string) (rest time.Duration, err error)
	// VolumeBanned tells that site banned ip: with rotate_after auto,
	// where the ban fell teaches the site's budget (modem_limit.go).
	VolumeBanned(ctx context.Context, site, ip string) error
	// RestExit keeps exit ip from site for d, as a quarantine does but
	// for no ban, ending hold h if it is still live.
	RestExit(ctx context.Context, site, ip string, h *ExitHold, d time.Duration) error
}

var _ VolumeGate = (*RedisBroker)(nil)

// TrailRest is how long a proxy that cannot rotate rests when it has
// sent as many requests as the canary of a budget not learned yet (the
// IP that sends until the site's first ban): the canary's count grows,
// so the proxy may send again soon, and the site bans the canary alone.
const TrailRest = 2 * time.Second

// VolumeSend asks lua/modem_send.lua for a proxy that is not a modem:
// nothing is asked of Redis for a site without rotate_after auto. The
// rest is until the IP's count starts over (keptFor after its first
// request), or TrailRest while it only trails the canary; at least the
// site's min_interval.
func (b *RedisBroker) VolumeSend(ctx context.Context, site, ip string) (time.Duration, error) {
	sc := b.cfg.site(site)
	if !sc.RotateAfterAuto || ip == "" {
		return 0, nil
	}
	res, err := b.send(ctx, "ip:"+ip, site, ip, false)
	if err != nil {
		return 0, fmt.Errorf("volume of %s on %s: %w", ip, site, err)
	}
	if num(res[0]) != 2 {
		return 0, nil
	}
	rest := keptFor(sc) - time.Duration(num(res[2]))*time.Millisecond
	if num(res[3]) == 1 {
		rest = TrailRest
	}
	return max(rest, sc.MinInterval, time.Millisecond), nil
}

// RestExit quarantines ip for site for d (lua/exit_ban.lua, which counts
// no ban), ending hold h if it is still live.
func (b *RedisBroker) RestExit(ctx context.Context, site, ip string, h *ExitHold, d time.Duration) error {
	var tok int64
	if h != nil {
		tok = h.Token
	}
	if _, err := b.eval(ctx, exitBanScript, b.k.exitBanKeys(site), []any{b.cfg.skew(), ip, tok, max(d.Milliseconds(), 1)}); err != nil {
		return fmt.Errorf("rest exit %s on %s: %w", ip, site, err)
	}
	return nil
}
