package proxies

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"
)

// ChangeMargin is kept over a modem's interval between two changes, so a
// change-IP call never lands at the provider's edge. It is derived from
// what the interval's two ends can be off by, the call's latency being
// taken out already (Changed moves the record to the link's answer, no
// earlier than the provider took the call):
//   - whole seconds: providers answer Retry-After in whole seconds and
//     many keep the change's time in a whole-second column, which MySQL's
//     DATETIME rounds to the nearest second (the MySQL 8.0 manual,
//     "Fractional Seconds in Time Values"): up to 0.5 s later than the
//     call;
//   - clock skew: the record is written on the broker Redis's clock and,
//     after a failover, read on the promoted replica's; NTP keeps two
//     servers within milliseconds to tens of milliseconds, budgeted here
//     at up to 0.5 s.
//
// A provider whose interval is longer still (it counts from the end of
// its change, or its real limit is not the one configured) answers 429,
// and its interval is learned from the Retry-After (Refused).
const ChangeMargin = time.Second

// MaxChangeEvery bounds a provider interval learned from a refusal: a
// Retry-After that implies more is taken as a refusal for another cause
// (a daily quota, an outage) and teaches nothing.
const MaxChangeEvery = time.Hour

// Provider is the host of the modem's change link (host:port, no key):
// what a provider interval is learned for. Modems sold by one provider
// share it.
func (m Modem) Provider() string {
	u, err := url.Parse(m.ChangeURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// ChangeLimitName is the learned limit (limit.go) that keeps provider's
// least interval between two changes of one modem, in ms: created at the
// first refusal that teaches one, at the change_every of the modem it
// came from (its min), at most MaxChangeEvery. A pinned value is used as
// it is; else the longer of it and a modem's change_every.
func ChangeLimitName(provider string) string { return "change:" + provider }

// Refusal is a change link's 429.
type Refusal struct {
	// RetryAfter is what the answer's Retry-After said; Given false when
	// it said nothing readable.
	RetryAfter time.Duration
	Given      bool
}

// Refused records that the link refused the call MayChange allowed for
// r (lua/rotate_refused.lua): the modem's last change goes back to the
// one before, and a Retry-After that implies a longer interval than the
// one in use teaches it for the provider. It returns the interval now in
// use and whether this refusal taught it, and moves r.NotBefore to the
// next change the provider allows (with the margin).
func (b *RedisBroker) Refused(ctx context.Context, r *Rotation, f Refusal) (every time.Duration, learned bool, err error) {
	md := r.Proxy.Modem
	ra := int64(-1)
	if f.Given {
		ra = f.RetryAfter.Milliseconds()
	}
	name := ChangeLimitName(md.Provider())
	res, err := b.eval(ctx, rotateRefusedScript, b.k.rotateRefusedKeys(name), []any{b.cfg.skew(), r.Proxy.ID, r.permitted, r.previous,
		ra, md.Every.Milliseconds(), name, MaxChangeEvery.Milliseconds()})
	if err != nil {
		return 0, false, fmt.Errorf("record the refused change of %s: %w", r.Proxy.ID, err)
	}
	every = time.Duration(num(res[0])) * time.Millisecond
	if r.previous > 0 {
		r.NotBefore = ms(r.previous).Add(every + ChangeMargin)
	}
	return every, num(res[1]) == 1, nil
}

// VolumeLimitName is the learned limit that keeps site's volume budget
// per exit IP under rotate_after auto: the requests one IP may send the
// site (counted as rotate_after counts them, for UseKept after the IP's
// first) before its modem rotates; 0 while none is learned.
func VolumeLimitName(site string) string { return "volume:" + site }

// VolumeKept is the share of the requests an IP sent before its ban that
// the learned budget keeps: a margin for a request the site counts and
// crawlq does not (a transport's retry) and a site window that reaches
// further back than the count.
const VolumeKept = 0.9

// CanaryTimeout is how long the canary IP of an unlearned volume budget
// may send nothing before another IP takes its place (modem_send.lua).
const CanaryTimeout = time.Minute

// ModemBanned learns the site's volume budget from a ban of exit ip
// carried by modem p (VolumeBanned).
func (b *RedisBroker) ModemBanned(ctx context.Context, p Proxy, site, ip string) error {
	if err := b.VolumeBanned(ctx, site, ip); err != nil {
		return fmt.Errorf("modem %s: %w", p.ID, err)
	}
	return nil
}

// VolumeBanned learns the site's volume budget from a ban of exit ip
// (lua/modem_volume.lua) when the site's rotate_after is auto: a share
// VolumeKept of the requests the IP sent before the banned one, where
// lower than the budget learned.
func (b *RedisBroker) VolumeBanned(ctx context.Context, site, ip string) error {
	if !b.cfg.site(site).RotateAfterAuto || ip == "" {
		return nil
	}
	res, err := b.eval(ctx, modemVolumeScript, b.k.modemVolumeKeys(site, ip), []any{b.cfg.skew(), VolumeLimitName(site), ip, VolumeKept})
	if err != nil {
		return fmt.Errorf("learn %s's volume from the ban of %s: %w", site, ip, err)
	}
	if num(res[1]) == 1 {
		b.log.Info("volume budget learned", zap.String("site", site), zap.Int64("requests", num(res[0])), zap.Int64("at_ban", num(res[2])))
	}
	return nil
}
