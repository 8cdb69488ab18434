package bench

import (
	"time"

	"crawlq/testbed"
)

// LearnResult is `crawlq bench crawl --learn`: one site with a hidden gap
// per IP, crawled by three arms side by side.
type LearnResult struct {
	ProxiesPerArm int     `json:"proxies_per_arm"`
	Workers       int     `json:"workers_per_arm"`
	Concurrency   int     `json:"concurrency"`
	DurationS     float64 `json:"duration_s"`
	// GapMS is the hidden gap at the start, TightenToMS the one from
	// TightenAtS on (0: never); the testbed's truth, not told to crawlq.
	GapMS       float64 `json:"gap_ms"`
	TightenToMS float64 `json:"tighten_to_ms,omitempty"`
	TightenAtS  float64 `json:"tighten_at_s,omitempty"`
	// LimitRPS is an arm's pages/s at the hidden gap (its proxies / gap),
	// TightLimitRPS at the tightened one.
	LimitRPS      float64  `json:"limit_rps"`
	TightLimitRPS float64  `json:"tight_limit_rps,omitempty"`
	Auto          LearnArm `json:"auto"`
	TooFast       LearnArm `json:"too_fast"`
	Fixed         LearnArm `json:"fixed"`
	// ReachS is when the auto arm's pages/s over 10 s first reached 0.9 ×
	// LimitRPS (-1: never); HeldOfLimit the least of its 10 s windows from
	// then until the tightening, over LimitRPS, HeldMeanOfLimit their
	// mean.
	ReachS          float64 `json:"reach_s"`
	HeldOfLimit     float64 `json:"held_of_limit"`
	HeldMeanOfLimit float64 `json:"held_mean_of_limit"`
	// LimitedShare is the auto arm's 429s over its requests, whole run.
	LimitedShare float64 `json:"limited_share"`
	// StopS is the time from the tightening to the auto arm's last 429
	// before TightenAt + 2 min; AfterOfLimit its pages/s in the 20 s
	// around TightenAt + 2 min over TightLimitRPS.
	StopS        float64 `json:"stop_s,omitempty"`
	AfterOfLimit float64 `json:"after_of_limit,omitempty"`
	// Accepted: reach within 3 min and held (the mean) ≥ 0.9, 429s ≤ 1 %, ≤ 2 IPs
	// banned, and after the tightening 429s stop within 30 s and pages/s
	// ≥ 0.9 × the new limit two minutes later.
	Accepted bool `json:"accepted"`
}

// LearnArm is one arm's figures.
type LearnArm struct {
	MinInterval string  `json:"min_interval"`
	RPS         float64 `json:"rps"`
	Pages       int     `json:"pages"`
	Requests    int     `json:"requests"`
	// Limited is the site's 429s for the hidden gap, Bans the bans it
	// started (an IP that kept going), BannedIPs the IPs banned, Refused
	// every request refused (429s and banned IPs' requests).
	Limited   int `json:"limited"`
	Bans      int `json:"bans"`
	BannedIPs int `json:"banned_ips"`
	Refused   int `json:"refused"`
	// PerTen is the OK pages/s of each 10 s; LimitedPerTen the 429s.
	PerTen        []float64 `json:"per_10s"`
	LimitedPerTen []int     `json:"limited_per_10s"`
	// Pace is the learned pace each second (auto only).
	Pace []PacePoint `json:"pace,omitempty"`
}

// PacePoint is the learned pace at S seconds into the run, and the
// canaries' probe.
type PacePoint struct {
	S     float64 `json:"s"`
	MS    int64   `json:"ms"`
	Probe string  `json:"probe,omitempty"`
}

// learnFigures reads the arms' figures from their meters and the site's
// log.
func learnFigures(tb *testbed.Testbed, o LearnOptions, arms []*learnArm, t0 time.Time) *LearnResult {
	res := &LearnResult{ProxiesPerArm: o.Proxies, Workers: o.Workers, Concurrency: o.Concurrency,
		DurationS: o.Duration.Seconds(), GapMS: ms3(o.Gap), LimitRPS: float64(o.Proxies) / o.Gap.Seconds()}
	if o.TightenAt > 0 && o.TightenAt < o.Duration {
		res.TightenToMS, res.TightenAtS = ms3(o.TightenTo), o.TightenAt.Seconds()
		res.TightLimitRPS = float64(o.Proxies) / o.TightenTo.Seconds()
	}
	entries := tb.Log.Entries()
	out := []*LearnArm{&res.Auto, &res.TooFast, &res.Fixed}
	var lastLimited []time.Duration
	for i, a := range arms {
		*out[i], lastLimited = armFigures(a, entries, o, t0, lastLimited, i == 0)
	}
	res.Auto.Pace = arms[0].pace
	res.accept(lastLimited)
	return res
}

func ms3(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

// armFigures counts one arm's pages and refusals; for the auto arm it
// also returns the times of its 429s.
func armFigures(a *learnArm, entries []testbed.Entry, o LearnOptions, t0 time.Time, limited []time.Duration, auto bool) (LearnArm, []time.Duration) {
	per := a.meter.perSecond()
	out := LearnArm{MinInterval: a.minIntv, Pages: a.meter.pages(), PerTen: perTen(per)}
	out.RPS = round3(float64(out.Pages) / o.Duration.Seconds())
	out.LimitedPerTen = make([]int, len(out.PerTen))
	banned := map[string]bool{}
	for _, e := range entries {
		if e.Site != o.Site || !a.ips[e.IP] || e.Verdict == testbed.VerdictExempt {
			continue
		}
		out.Requests++
		at := e.Start.Sub(t0)
		switch e.Verdict {
		case testbed.VerdictRateLimited:
			out.Limited++
			if b := int(at / (10 * time.Second)); b >= 0 && b < len(out.LimitedPerTen) {
				out.LimitedPerTen[b]++
			}
			if auto {
				limited = append(limited, at)
			}
		case testbed.VerdictHiddenBan:
			out.Bans++
			banned[e.IP] = true
		}
		if e.Verdict.Blocked() {
			out.Refused++
		}
	}
	out.BannedIPs = len(banned)
	return out, limited
}

// perTen sums pages per second into pages/s per 10 s.
func perTen(per []int) []float64 {
	var out []float64
	for i := 0; i < len(per); i += 10 {
		n, secs := 0, 0
		for j := i; j < min(i+10, len(per)); j++ {
			n += per[j]
			secs++
		}
		out = append(out, round3(float64(n)/float64(secs)))
	}
	return out
}

// accept computes the auto arm's acceptance figures.
func (res *LearnResult) accept(limited []time.Duration) {
	a := res.Auto
	res.ReachS, res.HeldOfLimit = -1, 0
	end := len(a.PerTen)
	if res.TightenAtS > 0 {
		end = int(res.TightenAtS / 10)
	}
	sum, n := 0.0, 0
	for i := 0; i < min(end, len(a.PerTen)); i++ {
		if res.ReachS < 0 && a.PerTen[i] >= 0.9*res.LimitRPS {
			res.ReachS, res.HeldOfLimit = float64(i*10+10), a.PerTen[i]/res.LimitRPS
		}
		if res.ReachS >= 0 {
			res.HeldOfLimit = min(res.HeldOfLimit, a.PerTen[i]/res.LimitRPS)
			sum, n = sum+a.PerTen[i], n+1
		}
	}
	res.HeldOfLimit = round3(res.HeldOfLimit)
	if n > 0 {
		res.HeldMeanOfLimit = round3(sum / float64(n) / res.LimitRPS)
	}
	if a.Requests > 0 {
		res.LimitedShare = round3(float64(a.Limited) / float64(a.Requests))
	}
	ok := res.ReachS >= 0 && res.ReachS <= 180 && res.HeldMeanOfLimit >= 0.9 && res.LimitedShare <= 0.01 && a.BannedIPs <= 2
	if res.TightenAtS > 0 {
		ok = ok && res.afterTighten(limited)
	}
	res.Accepted = ok
}

// afterTighten computes StopS and AfterOfLimit and says whether both
// pass.
func (res *LearnResult) afterTighten(limited []time.Duration) bool {
	at := time.Duration(res.TightenAtS * float64(time.Second))
	for _, l := range limited {
		if l >= at && l < at+2*time.Minute {
			res.StopS = round3(max(res.StopS, (l - at).Seconds()))
		}
	}
	i := int(res.TightenAtS/10) + 11 // the 10 s windows at +110..130 s
	a := res.Auto.PerTen
	if i+1 < len(a) && res.TightLimitRPS > 0 {
		res.AfterOfLimit = round3((a[i] + a[i+1]) / 2 / res.TightLimitRPS)
	}
	return res.StopS <= 30 && res.AfterOfLimit >= 0.9
}
