package web

import (
	"sync"
	"time"

	"crawlq/proxies"
)

// sample is the pool's cumulative outcome counters at one moment.
type sample struct {
	At     time.Time
	OK     int64
	Failed int64
	Banned int64
}

// RatePoint is the pool-wide success rate over the interval ending at At:
// ok / (ok + failed + banned) of the leases released in that interval.
type RatePoint struct {
	At       time.Time `json:"at"`
	Rate     float64   `json:"rate"`
	Requests int64     `json:"requests"`
}

// history keeps the last samples in memory, oldest first; safe for
// concurrent use by the sampler and the page handlers.
type history struct {
	mu      sync.Mutex
	max     int
	samples []sample
}

func newHistory(max int) *history { return &history{max: max} }

// add records the counters of one stats snapshot.
func (h *history) add(ps *proxies.PoolStats) {
	s := totals(ps)
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

// rates turns consecutive samples into success-rate points; an interval
// without requests gives no point.
func (h *history) rates() []RatePoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []RatePoint{}
	for i := 1; i < len(h.samples); i++ {
		prev, cur := h.samples[i-1], h.samples[i]
		ok := cur.OK - prev.OK
		n := ok + (cur.Failed - prev.Failed) + (cur.Banned - prev.Banned)
		if n > 0 {
			out = append(out, RatePoint{At: cur.At, Rate: float64(ok) / float64(n), Requests: n})
		}
	}
	return out
}

// totals sums the outcome counters over every proxy and site.
func totals(ps *proxies.PoolStats) sample {
	s := sample{At: ps.At}
	if s.At.IsZero() {
		s.At = time.Now()
	}
	for _, p := range ps.Proxies {
		for _, st := range p.Sites {
			s.OK += st.OK
			s.Failed += st.Failed
			s.Banned += st.Banned
		}
	}
	return s
}
