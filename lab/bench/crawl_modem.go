package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
	"crawlq/testbed"
)

// Modem phases: the same modems, imported three ways.
const (
	// ModemQuarantine imports the modems without their change links:
	// plain proxies that learn their exit, quarantined on a ban.
	ModemQuarantine = "quarantine"
	// ModemRotateOnBan imports them with their links: a ban rotates.
	ModemRotateOnBan = "rotate-on-ban"
	// ModemRotateBefore adds the site's rotate_after below the volume
	// threshold: the modem rotates before the site bans it.
	ModemRotateBefore = "rotate-before"
)

// DefaultVolume is the bench's volume rule: Avito's (600 requests in
// 15 min) scaled by 60, 10 requests in 15 s, so a modem at the site's
// 1 s pace is banned after about 11 s.
func DefaultVolume() testbed.VolumeRule { return testbed.AvitoVolume().Scaled(60) }

// ParseVolume reads a volume rule written "REQUESTS/WINDOW" ("10/15s").
func ParseVolume(s string) (testbed.VolumeRule, error) {
	n, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	req, err := strconv.Atoi(n)
	if !ok || err != nil || req < 1 {
		return testbed.VolumeRule{}, fmt.Errorf("volume %q: want REQUESTS/WINDOW such as 10/15s, requests at least 1", s)
	}
	d, err := time.ParseDuration(w)
	if err != nil || d <= 0 {
		return testbed.VolumeRule{}, fmt.Errorf("volume %q: window %q is not a positive duration", s, w)
	}
	return testbed.VolumeRule{Requests: req, Window: d}, nil
}

// ModemCrawlResult is `crawlq bench crawl --modems N`: the volume-ban
// Avito crawled through N testbed modems in three phases.
type ModemCrawlResult struct {
	Modems        int     `json:"modems"`
	Exits         int     `json:"carrier_exits"`
	Workers       int     `json:"workers"`
	Concurrency   int     `json:"concurrency"`
	DurationS     float64 `json:"duration_s"`
	MinIntervalMS float64 `json:"min_interval_ms"`
	// VolumeRequests in VolumeWindowS is the site's volume rule; the
	// site bans an IP for four windows.
	VolumeRequests int     `json:"volume_requests"`
	VolumeWindowS  float64 `json:"volume_window_s"`
	ChangeEveryS   float64 `json:"change_every_s"`
	// ProviderEveryS is the provider's real interval (the testbed's).
	ProviderEveryS float64 `json:"provider_every_s"`
	ChangeSettleS  float64 `json:"change_settle_s"`
	RotateAfter    int     `json:"rotate_after"`
	// LearnVolume: rotate-before ran with rotate_after auto; it is then
	// accepted with at most 3 bans to learn the budget and none after.
	LearnVolume bool `json:"learn_volume"`
	// QuarantineBaseS and QuarantineCapS are the broker's quarantine,
	// today's 300 s and 3600 s scaled as the volume rule is.
	QuarantineBaseS float64 `json:"quarantine_base_s"`
	QuarantineCapS  float64 `json:"quarantine_cap_s"`
	// LimitRPS is the per-IP limit of the modems, N / min interval.
	LimitRPS     float64    `json:"limit_rps"`
	Quarantine   ModemPhase `json:"quarantine"`
	RotateOnBan  ModemPhase `json:"rotate_on_ban"`
	RotateBefore ModemPhase `json:"rotate_before"`
	// OnBanOfQuarantine is rotate-on-ban's pages/s over quarantine's
	// (accepted at 3 or more).
	OnBanOfQuarantine float64 `json:"on_ban_of_quarantine"`
	// IdealRPS is the limit less the rotation time: N × R / (R × D +
	// p50), a modem sending rotate_after (R) requests D apart, then
	// rotating for rotate-before's p50; TargetRPS is 0.8 × IdealRPS and
	// BeforeOfIdeal rotate-before's pages/s over IdealRPS.
	IdealRPS      float64 `json:"ideal_rps"`
	TargetRPS     float64 `json:"target_rps"`
	BeforeOfIdeal float64 `json:"before_of_ideal"`
	// Accepted: on-ban ≥ 3 × quarantine, rotate-before at 0 bans and at
	// the target, and every phase clean (Clean), of the phases run.
	Accepted bool `json:"accepted"`
}

// ModemPhase is one modem phase's figures: the crawl's (pages/s, bans
// and I1/I2 per exit IP from the site's log) and the modems'.
type ModemPhase struct {
	Phase
	// Rotations are the changes the modem node accepted; Refusals those
	// it refused (429); TooSoon accepted changes closer than the
	// provider's interval; WhileSettling requests that reached a modem
	// while it settled (the node's record).
	Rotations     int `json:"rotations"`
	Refusals      int `json:"refusals"`
	TooSoon       int `json:"too_soon"`
	WhileSettling int `json:"while_settling"`
	// RotationFailed counts rotations the workers gave up on (the modem
	// quarantined instead); RotationP50MS and P90MS the rotations' time
	// from the ban (or rotate_after) to the new IP, from the pool.
	RotationFailed int64   `json:"rotation_failed"`
	RotationP50MS  float64 `json:"rotation_p50_ms"`
	RotationP90MS  float64 `json:"rotation_p90_ms"`
	// LearnedChangeEveryS is the provider's interval crawlq learned
	// from its refusals (0: none); LateRefusals the refusals more than
	// a second after the first (the first taught the interval: a call
	// made after it keeps it).
	LearnedChangeEveryS float64 `json:"learned_change_every_s"`
	LateRefusals        int     `json:"late_refusals"`
	// LearnedBudget is the site's volume budget per IP learned under
	// rotate_after auto (0: none), BansToLearn the bans up to its first
	// learning and BansAfter those after it.
	LearnedBudget int64 `json:"learned_budget"`
	// HiddenBudget is the site's volume rule's requests per window at
	// the phase's end, from the testbed's truth (VolumeTruth).
	HiddenBudget int `json:"hidden_budget"`
	BansToLearn  int `json:"bans_to_learn"`
	BansAfter    int `json:"bans_after"`
	// PagesPerModemHour is the window's OK pages per modem-hour, the
	// figure mobile proxies are bought by.
	PagesPerModemHour float64 `json:"pages_per_modem_hour"`
	// ModemRequests are the requests each modem carried.
	ModemRequests map[string]int `json:"modem_requests"`
}

// Clean says the phase kept the provider's and the site's rules: no
// request while settling, no change too soon, no I1/I2 on an exit IP.
func (p ModemPhase) Clean() bool {
	return p.WhileSettling == 0 && p.TooSoon == 0 && p.I1Violations == 0 && p.I2Violations == 0
}

// RunModemCrawl crawls the volume-ban Avito through o.Modems testbed
// modems, three phases one after the other, each on a fresh testbed and
// a pool of its own: quarantine, rotation on ban, rotation before the
// ban. The target DB must be empty; its asynq:* and crawlq:* keys are
// deleted at the end.
func RunModemCrawl(ctx context.Context, target CrawlTarget, o CrawlOptions) (*ModemCrawlResult, error) {
	o.Site = testbed.SiteAvito
	o = o.withDefaults()
	if o.Modems <= 0 || o.Gateway > 0 || o.Challenge || target.split() {
		return nil, fmt.Errorf("bench crawl: modems want --modems > 0, without a gateway, challenge mode or a broker Redis")
	}
	if o.MinInterval <= 0 {
		return nil, fmt.Errorf("bench crawl: modems want a min interval, the per-IP limit")
	}
	if err := checkEmpty(ctx, target.Client); err != nil {
		return nil, err
	}
	defer cleanupCrawl(context.WithoutCancel(ctx), target.Client)
	if err := target.defaultNewClient(); err != nil {
		return nil, err
	}
	r := &crawlRun{o: o, t: target, log: o.Logger}
	return r.runModems(ctx)
}

func (r *crawlRun) runModems(ctx context.Context) (*ModemCrawlResult, error) {
	res := r.modemHeader()
	out := map[string]*ModemPhase{ModemQuarantine: &res.Quarantine, ModemRotateOnBan: &res.RotateOnBan, ModemRotateBefore: &res.RotateBefore}
	for _, name := range r.o.ModemPhases {
		ph, ok := out[name]
		if !ok {
			return nil, fmt.Errorf("bench crawl: no modem phase %q (want %s, %s or %s)", name, ModemQuarantine, ModemRotateOnBan, ModemRotateBefore)
		}
		var err error
		labelled(ctx, name, func(ctx context.Context) { *ph, err = r.modemPhase(ctx, r.modemPolicy(name)) })
		if err != nil {
			return nil, fmt.Errorf("%s phase: %w", name, err)
		}
	}
	res.accept()
	return res, nil
}

func (r *crawlRun) modemHeader() *ModemCrawlResult {
	q := r.modemSiteConfig(ModemQuarantine)
	return &ModemCrawlResult{Modems: r.o.Modems, Exits: r.o.ModemExits, Workers: r.o.Workers, Concurrency: r.o.Concurrency,
		DurationS: r.o.Duration.Seconds(), MinIntervalMS: float64(r.o.MinInterval) / float64(time.Millisecond),
		VolumeRequests: r.o.Volume.Requests, VolumeWindowS: r.o.Volume.Window.Seconds(),
		ChangeEveryS: r.o.ChangeEvery.Seconds(), ProviderEveryS: r.o.ProviderEvery.Seconds(), ChangeSettleS: r.o.ChangeSettle.Seconds(), RotateAfter: r.o.RotateAfter, LearnVolume: r.o.LearnVolume,
		QuarantineBaseS: q.QuarantineBase.Seconds(), QuarantineCapS: q.QuarantineCap.Seconds(),
		LimitRPS: float64(r.o.Modems) / r.o.MinInterval.Seconds()}
}

// modemDefaults completes the modem options: the scaled volume rule, a
// change every 3 s settling 1 s, rotate_after 2 below the volume
// threshold and a carrier pool of 64 IPs a modem (a large pool: a modem
// seldom comes back on an IP the site still counts).
func (o *CrawlOptions) modemDefaults() {
	if o.Volume.Requests <= 0 || o.Volume.Window <= 0 {
		o.Volume = DefaultVolume()
	}
	if o.ChangeEvery <= 0 {
		o.ChangeEvery = 3 * time.Second
	}
	if o.ChangeSettle <= 0 {
		o.ChangeSettle = time.Second
	}
	if len(o.ModemPhases) == 0 {
		o.ModemPhases = []string{ModemQuarantine, ModemRotateOnBan, ModemRotateBefore}
	}
	if o.ProviderEvery <= 0 {
		o.ProviderEvery = o.ChangeEvery
	}
	setInt(&o.RotateAfter, max(o.Volume.Requests-2, 1))
	setInt(&o.ModemExits, 64*o.Modems)
	setInt(&o.Concurrency, DefaultConcurrency(o.Modems, o.Workers, o.MinInterval))
}

// modemPolicy is crawlq's broker on a pool of the phase's own, with the
// site's min interval, the scaled quarantine and, before the ban,
// rotate_after.
func (r *crawlRun) modemPolicy(phase string) policy {
	cfg := proxies.Config{Pool: "bench-" + phase, Sites: map[string]proxies.SiteConfig{r.o.Site: r.modemSiteConfig(phase)}}
	return policy{
		name:   phase,
		modems: phase,
		newBroker: func(rdb redis.UniversalClient) proxies.Broker {
			return proxies.NewRedisBroker(rdb, cfg)
		},
		load: func(ctx context.Context, rdb redis.UniversalClient, ps []proxies.Proxy) error {
			_, err := proxies.NewRedisBroker(rdb, cfg).Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter})
			return err
		},
	}
}

// modemSiteConfig is the site's broker policy in phase: the quarantine
// scaled as the volume rule is (today's 300 s to 3600 s over the same k
// that turns Avito's 15 min window into the bench's), so the phases
// compare at one time scale.
func (r *crawlRun) modemSiteConfig(phase string) proxies.SiteConfig {
	k := testbed.AvitoVolume().Window.Seconds() / r.o.Volume.Window.Seconds()
	sc := proxies.SiteConfig{MinInterval: brokerInterval(r.o.MinInterval),
		QuarantineBase: time.Duration(float64(proxies.DefaultQuarantineBase) / k),
		QuarantineCap:  time.Duration(float64(proxies.DefaultQuarantineCap) / k)}
	if phase == ModemRotateBefore {
		sc.RotateAfter, sc.RotateAfterAuto = r.o.RotateAfter, r.o.LearnVolume
	}
	return sc
}

// modemConfig is the testbed's modem node; nil without modems.
func (r *crawlRun) modemConfig() *testbed.ModemConfig {
	if r.o.Modems <= 0 {
		return nil
	}
	return &testbed.ModemConfig{N: r.o.Modems, Exits: r.o.ModemExits, MinInterval: r.o.ProviderEvery,
		Advertised: r.o.ChangeEvery, WholeSeconds: r.o.WholeSeconds, Settle: r.o.ChangeSettle, User: modemUser, Password: modemPassword, Seed: r.o.Seed}
}

// The bench modems' credentials (loopback only).
const (
	modemUser     = "bench-modem"
	modemPassword = "bench-modem-pass"
)

// modemProxies are the modems' lines for phase: with their change
// links, or in the quarantine phase without (plain proxies that learn
// their exit by a probe of the testbed's echo).
func modemProxies(tb *testbed.Testbed, phase string) ([]proxies.Proxy, error) {
	lines := tb.ModemLines()
	if phase == ModemQuarantine {
		for i := range lines {
			lines[i] = tb.Modems.URL(i) + " exit=probe:" + tb.EchoURL()
		}
	}
	return proxies.ParseReader(strings.NewReader(strings.Join(lines, "\n")), "modems.txt")
}

// modemPhase crawls one phase and reads the modems' figures once its
// workers stopped.
func (r *crawlRun) modemPhase(ctx context.Context, pol policy) (ModemPhase, error) {
	var out ModemPhase
	ph, err := r.crawlPhase(ctx, pol, func(ctx context.Context, env *phaseEnv) error {
		return r.modemFigures(ctx, pol, env, &out)
	})
	out.Phase = ph
	if r.o.Duration > 0 {
		out.PagesPerModemHour = round3(float64(ph.Pages) / (float64(r.o.Modems) * r.o.Duration.Hours()))
	}
	return out, err
}

// modemFigures reads the modem node's record and the pool's rotation
// times into out.
func (r *crawlRun) modemFigures(ctx context.Context, pol policy, env *phaseEnv, out *ModemPhase) error {
	st := env.tb.Modems.Stats()
	out.Rotations, out.Refusals, out.TooSoon, out.WhileSettling = len(st.Rotations), len(st.Refusals), st.TooSoon, len(st.WhileSettling)
	out.ModemRequests = st.Requests
	for _, f := range st.Refusals {
		if f.At.Sub(st.Refusals[0].At) > time.Second {
			out.LateRefusals++
		}
	}
	for _, w := range env.workers {
		out.RotationFailed += w.Sessions().ModemCounts().Failed
	}
	b, ok := pol.newBroker(r.t.Client).(*proxies.RedisBroker)
	if !ok {
		return nil
	}
	ms, err := b.ModemStats(ctx)
	if err != nil {
		return fmt.Errorf("modem stats: %w", err)
	}
	out.RotationP50MS, out.RotationP90MS = float64(ms.P50.Milliseconds()), float64(ms.P90.Milliseconds())
	ls, err := b.Limits(ctx)
	for _, l := range ls {
		if strings.HasPrefix(l.Name, proxies.ChangeLimitName("")) {
			out.LearnedChangeEveryS = max(out.LearnedChangeEveryS, round3(float64(l.Value)/1000))
		}
	}
	if err != nil || !r.o.LearnVolume {
		return err
	}
	return r.volumeFigures(ctx, b, env, out)
}

// volumeFigures reads the learned volume budget and splits the site's
// bans at its first learning.
func (r *crawlRun) volumeFigures(ctx context.Context, b *proxies.RedisBroker, env *phaseEnv, out *ModemPhase) error {
	name := proxies.VolumeLimitName(r.o.Site)
	l, err := b.Limit(ctx, name)
	if errors.Is(err, proxies.ErrUnknownLimit) {
		return nil
	}
	if err != nil {
		return err
	}
	out.LearnedBudget = l.Value
	hidden, _ := env.tb.VolumeTruth()
	out.HiddenBudget = hidden[r.o.Site].Requests
	log, err := b.LimitLog(ctx, name, proxies.LimitLogLen)
	if err != nil {
		return err
	}
	var learned time.Time
	for _, c := range log { // newest first: the last with a value is the first learned
		if c.Value > 0 {
			learned = c.At
		}
	}
	for _, e := range env.tb.Log.Entries() {
		switch {
		case e.Site != r.o.Site || !e.Verdict.Blocked():
		case learned.IsZero() || !e.Start.After(learned):
			out.BansToLearn++
		default:
			out.BansAfter++
		}
	}
	return nil
}

// accept computes the ratios and the acceptance.
func (res *ModemCrawlResult) accept() {
	q, on, before := res.Quarantine, res.RotateOnBan, res.RotateBefore
	if q.RPS > 0 {
		res.OnBanOfQuarantine = round3(on.RPS / q.RPS)
	}
	d := res.MinIntervalMS / 1000
	cycle := float64(res.RotateAfter)*d + before.RotationP50MS/1000
	if cycle > 0 {
		res.IdealRPS = round3(float64(res.Modems*res.RotateAfter) / cycle)
		res.TargetRPS = round3(0.8 * res.IdealRPS)
	}
	if res.IdealRPS > 0 {
		res.BeforeOfIdeal = round3(before.RPS / res.IdealRPS)
	}
	ran := func(p ModemPhase) bool { return p.Requests > 0 }
	onBanFaster := !ran(q) || !ran(on) || q.RPS > 0 && on.RPS >= 3*q.RPS || q.RPS == 0 && on.RPS > 0
	noBans := before.Bans == 0
	if res.LearnVolume {
		noBans = before.BansToLearn <= 3 && before.BansAfter == 0 && before.LearnedBudget > 0
	}
	beforeOK := !ran(before) || noBans && before.RPS >= res.TargetRPS
	res.Accepted = (ran(q) || ran(on) || ran(before)) && onBanFaster && beforeOK && q.Clean() && on.Clean() && before.Clean()
}
