package proxies

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// pacedSite is a site with a hidden gap per proxy, on the broker's
// injected clock: a request sooner than gap after the proxy's last one is
// answered 429.
type pacedSite struct {
	gap      time.Duration
	last     map[string]time.Duration
	limited  map[string]int // 429s per proxy
	requests int
}

func (s *pacedSite) answer(id string, now time.Duration) Outcome {
	s.requests++
	last, seen := s.last[id]
	s.last[id] = now
	if seen && now-last < s.gap {
		s.limited[id]++
		return RateLimited(time.Second)
	}
	return OK(time.Millisecond)
}

// learnSim leases, asks the site and releases one request at a time,
// moving the clock to the next ready proxy when none is, for n requests.
// Each lease's pace is recorded by proxy.
type learnSim struct {
	t     *testing.T
	b     *RedisBroker
	clk   *clock
	site  *pacedSite
	paces map[string]time.Duration // fastest pace each proxy was leased at
}

const learnSite = "shop"

func newLearnSim(t *testing.T, pool string, learn PaceLearning, proxies int, gap time.Duration) *learnSim {
	clk := &clock{}
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies),
		clk.config(Config{Pool: pool, Sites: map[string]SiteConfig{learnSite: {Learn: &learn}}}))
	importN(t, b, proxies, ImportOptions{})
	return &learnSim{t: t, b: b, clk: clk, site: &pacedSite{gap: gap, last: map[string]time.Duration{}, limited: map[string]int{}},
		paces: map[string]time.Duration{}}
}

func (s *learnSim) run(n int) {
	s.t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		l, err := s.b.Lease(ctx, LeaseRequest{Site: learnSite, Class: Datacenter, Holder: "sim", Task: "t", TTL: time.Minute})
		var nr *NotReadyError
		if errors.As(err, &nr) {
			s.clk.advance(max(nr.Wait, time.Millisecond))
			continue
		}
		if err != nil {
			s.t.Fatal(err)
		}
		if p, ok := s.paces[l.Proxy.ID]; !ok || l.MinInterval < p {
			s.paces[l.Proxy.ID] = l.MinInterval
		}
		if err := s.b.Release(ctx, l, s.site.answer(l.Proxy.ID, time.Duration(l.NotBefore.UnixNano()))); err != nil {
			s.t.Fatal(err)
		}
		done++
	}
}

func (s *learnSim) pace() Limit {
	s.t.Helper()
	l, err := s.b.Limit(context.Background(), PaceName(learnSite, Datacenter))
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}

// TestPaceLearnerFindsTheHiddenGap: from 8 s with no hint, the learned
// pace comes down step by step to within 10 % of a hidden 1 s gap; only
// canaries (2 at a time) run faster than the safe pace or get a 429, a
// canary that gets one rests, and a few 429s pay for it.
func TestPaceLearnerFindsTheHiddenGap(t *testing.T) {
	s := newLearnSim(t, "learn-find", PaceLearning{Min: 100 * time.Millisecond, Max: 8 * time.Second, Canaries: 2, Clean: 4}, 8, time.Second)
	s.run(1500)
	p := s.pace()
	if p.Value < 1000 || p.Value > 1111 {
		t.Fatalf("learned pace %d ms, want within 10%% of the hidden 1000 ms (%+v)", p.Value, p)
	}
	if !strings.Contains(p.Reason, "clean answers") {
		t.Errorf("last change %q, want a speed-up by clean answers", p.Reason)
	}
	limited := 0
	for id, n := range s.site.limited {
		limited += n
		if n > 1 {
			t.Errorf("proxy %s limited %d times: a canary that hits the limit rests", id, n)
		}
	}
	if limited > 6 {
		t.Fatalf("429s: %v, want a few, one per failed probe", s.site.limited)
	}
	faster := 0
	for _, d := range s.paces {
		if d.Milliseconds() < p.Value {
			faster++
		}
	}
	if faster > 2+limited {
		t.Fatalf("%d proxies ran faster than the learned pace, want the 2 canaries and one more per 429: %v", faster, s.paces)
	}
	if n := p.State["ncanary"]; n > "2" {
		t.Fatalf("canaries: %s, want at most 2", n)
	}
}

// TestPaceLearnerSlowsAtOnceAndFollowsATighterGap: a 429 at the safe pace
// slows every proxy at once (the next lease anywhere runs slower); the
// other leases of the old pace that also get one change nothing more
// (fenced by the pace they ran at); the learner settles on the new gap.
func TestPaceLearnerSlowsAtOnceAndFollowsATighterGap(t *testing.T) {
	s := newLearnSim(t, "learn-tight", PaceLearning{Min: 100 * time.Millisecond, Max: 8 * time.Second, Canaries: 2, Clean: 4}, 8, time.Second)
	s.run(1500)
	before := s.pace().Value
	s.site.gap = 2 * time.Second
	for id := range s.site.limited {
		delete(s.site.limited, id)
	}
	s.run(200)
	slowed := false
	log, _ := s.b.LimitLog(context.Background(), PaceName(learnSite, Datacenter), 50)
	for _, c := range log {
		if strings.HasPrefix(c.Reason, "429 at ") && c.Value >= 2*before {
			slowed = true
		}
	}
	if !slowed {
		t.Fatalf("no slow-down past twice %d ms after the gap doubled: %+v", before, log)
	}
	s.run(1000)
	if p := s.pace(); p.Value < 2000 || p.Value > 2222 {
		log, _ := s.b.LimitLog(context.Background(), PaceName(learnSite, Datacenter), 50)
		t.Fatalf("pace %d ms after the gap went to 2 s, want within 10%%: %+v %+v", p.Value, p.State, log)
	}
	if len(s.site.limited) > 8 {
		t.Fatalf("429s after the change: %v", s.site.limited)
	}
}

// TestPaceLearnerFencesStaleAnswers: two leases at the safe pace both get
// a 429: the first slows the pace 2.1 times, the second (ran at the old
// pace, answered after the change) moves nothing, nor starts a probe
// while probing is held after the slow-down.
func TestPaceLearnerFencesStaleAnswers(t *testing.T) {
	s := newLearnSim(t, "learn-fence", PaceLearning{Min: 100 * time.Millisecond, Max: 4 * time.Second, Start: 500 * time.Millisecond, Canaries: 1}, 4, time.Second)
	ctx := context.Background()
	var ls []*Lease
	for len(ls) < 3 {
		l, err := s.b.Lease(ctx, LeaseRequest{Site: learnSite, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if l.MinInterval == 500*time.Millisecond { // not the canary
			ls = append(ls, l)
		}
	}
	for _, l := range ls[:2] {
		if err := s.b.Release(ctx, l, RateLimited(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if p := s.pace(); p.Value != 1050 || p.Gen != 2 || p.State["probe"] != "1050" {
		t.Fatalf("after two 429s at 500 ms: %d ms gen %d probe %s, want 1050 ms after one change, nothing probed (held)",
			p.Value, p.Gen, p.State["probe"])
	}
	if err := s.b.Release(ctx, ls[2], OK(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	s.clk.advance(time.Minute)
	l, err := s.b.Lease(ctx, LeaseRequest{Site: learnSite, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if l.MinInterval != 1050*time.Millisecond {
		t.Fatalf("next lease runs at %s, want the slowed pace (nothing probed right after a slow-down)", l.MinInterval)
	}
}

// TestPinnedPaceNeverMoves: a pinned pace stays through 429s and clean
// answers, every proxy runs at it, and a restarted broker keeps it.
func TestPinnedPaceNeverMoves(t *testing.T) {
	s := newLearnSim(t, "learn-pin", PaceLearning{Min: 100 * time.Millisecond, Max: 8 * time.Second, Canaries: 2, Clean: 2}, 4, time.Second)
	s.run(1)
	if err := s.b.PinLimit(context.Background(), PaceName(learnSite, Datacenter), 700); err != nil {
		t.Fatal(err)
	}
	s.run(300)
	if p := s.pace(); p.Value != 700 || !p.Pinned {
		t.Fatalf("pinned pace moved: %+v", p)
	}
	for id, d := range s.paces {
		if d != 700*time.Millisecond && d != 8*time.Second {
			t.Fatalf("proxy %s leased at %s, want the pinned 700ms", id, d)
		}
	}
}

// TestLearnedPaceSurvivesARestart: a broker started later on the same
// Redis (a restarted worker) leases at the pace learned, not the start.
func TestLearnedPaceSurvivesARestart(t *testing.T) {
	learn := PaceLearning{Min: 100 * time.Millisecond, Max: 8 * time.Second, Canaries: 1, Clean: 2}
	s := newLearnSim(t, "learn-restart", learn, 4, time.Second)
	s.run(400)
	learned := s.pace().Value
	if learned >= 8000 {
		t.Fatalf("nothing learned: %d ms", learned)
	}
	b2 := NewRedisBroker(testredis.NewClient(t, testredis.DBProxies),
		s.clk.config(Config{Pool: "learn-restart", Sites: map[string]SiteConfig{learnSite: {Learn: &learn}}}))
	s.b = b2
	s.paces = map[string]time.Duration{}
	s.run(4)
	slowest := time.Duration(0)
	for _, d := range s.paces {
		slowest = max(slowest, d)
	}
	if slowest.Milliseconds() != learned {
		t.Fatalf("a restarted broker leases at %s, want the learned %d ms", slowest, learned)
	}
}
