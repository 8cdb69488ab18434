package web

import (
	"sync"
	"time"
)

// sample is the pool's cumulative outcome counters per site at one moment.
type sample struct {
	At    time.Time
	Sites map[string][3]int64 // ok, failed, banned
	P90   map[string]time.Duration
}

// RatePoint is the success rate over the interval ending at At: ok / (ok
// + failed + banned) of the leases released in that interval, the bans
// per minute in it, and for one site the 90th percentile of its proxies'
// latency at At.
type RatePoint struct {
	At         time.Time     `json:"at"`
	Rate       float64       `json:"rate"`
	Requests   int64         `json:"requests"`
	BansPerMin float64       `json:"bans_per_min"`
	P90        time.Duration `json:"p90_latency,omitempty"`
}

// history keeps the last samples in memory, oldest first; safe for
// concurrent use by the sampler and the page handlers.
type history struct {
	mu      sync.Mutex
	max     int
	samples []sample
}

func newHistory(max int) *history { return &history{max: max} }

// add records the counters of one pool view.
func (h *history) add(v *poolView) {
	s := sample{At: v.At, Sites: v.sumOutcomes(), P90: v.SiteP90}
	if s.At.IsZero() {
		s.At = time.Now()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
	if len(h.samples) > h.max {
		h.samples = append(h.samples[:0], h.samples[len(h.samples)-h.max:]...)
	}
}

// len is the number of samples kept.
func (h *history) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.samples)
}

// rates turns consecutive samples into points for one site, or the whole
// pool for site ""; an interval without requests gives no point.
func (h *history) rates(site string) []RatePoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []RatePoint{}
	for i := 1; i < len(h.samples); i++ {
		prev, cur := h.samples[i-1].total(site), h.samples[i].total(site)
		ok, failed, banned := cur[0]-prev[0], cur[1]-prev[1], cur[2]-prev[2]
		n := ok + failed + banned
		if n <= 0 {
			continue
		}
		p := RatePoint{At: h.samples[i].At, Rate: float64(ok) / float64(n), Requests: n, P90: h.samples[i].P90[site]}
		if d := h.samples[i].At.Sub(h.samples[i-1].At); d > 0 {
			p.BansPerMin = float64(banned) / d.Minutes()
		}
		out = append(out, p)
	}
	return out
}

// total is one site's counters, or the sum over every site for "".
func (s sample) total(site string) [3]int64 {
	if site != "" {
		return s.Sites[site]
	}
	var t [3]int64
	for _, c := range s.Sites {
		t = [3]int64{t[0] + c[0], t[1] + c[1], t[2] + c[2]}
	}
	return t
}
