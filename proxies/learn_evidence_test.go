package proxies

import (
	"context"
	"errors"
	"testing"
	"time"
)

// busySim is the pace learner under a site that takes time to answer:
// slots holders lease at once, each lease sends pages requests (the
// first late after the lease, each next one the lease's pace after the
// answer before it), and every answer comes lat after its request, on
// the broker's injected clock. evidence: the releases carry Outcome's
// Sent and Paced, as sessions' do.
type busySim struct {
	*learnSim
	slots, pages int
	lat, late    time.Duration
	evidence     bool
}

// flight is a lease whose answers are on their way: released at done.
type flight struct {
	l    *Lease
	done time.Time
	o    Outcome
}

// at is the broker's now.
func (s *busySim) at() time.Time { return time.Now().Add(s.clk.now()) }

// send runs lease l's requests from its NotBefore (or now, if later).
func (s *busySim) send(l *Lease) flight {
	t0 := s.at()
	if l.NotBefore.After(t0) {
		t0 = l.NotBefore
	}
	t0 = t0.Add(s.late)
	t, o, paced := t0, OK(s.lat), 0
	for p := 0; p < s.pages; p++ {
		if p > 0 {
			t = t.Add(l.MinInterval)
			paced++
		}
		a := s.site.answer(l.Proxy.ID, time.Duration(t.UnixNano()))
		t = t.Add(s.lat)
		if a.Kind != OutcomeOK {
			o = a
			break
		}
	}
	if s.evidence && o.Kind == OutcomeOK {
		o.Sent, o.Paced = t.Sub(t0), paced
	}
	return flight{l: l, done: t, o: o}
}

// run releases n leases.
func (s *busySim) run(n int) {
	s.t.Helper()
	ctx := context.Background()
	var fl []flight
	for done := 0; done < n; {
		next := time.Time{}
		if len(fl) < s.slots {
			l, err := s.b.Lease(ctx, LeaseRequest{Site: learnSite, Class: Datacenter, Holder: "sim", Task: "t", TTL: time.Hour})
			var nr *NotReadyError
			switch {
			case err == nil:
				fl = append(fl, s.send(l))
				continue
			case errors.As(err, &nr):
				next = s.at().Add(max(nr.Wait, time.Millisecond))
			case !errors.Is(err, ErrNoProxy):
				s.t.Fatal(err)
			}
		}
		first := -1
		for i, f := range fl {
			if first < 0 || f.done.Before(fl[first].done) {
				first = i
			}
		}
		if first >= 0 && (next.IsZero() || !fl[first].done.After(next)) {
			f := fl[first]
			fl = append(fl[:first], fl[first+1:]...)
			if d := f.done.Sub(s.at()); d > 0 {
				s.clk.advance(d)
			}
			if err := s.b.Release(ctx, f.l, f.o); err != nil {
				s.t.Fatal(err)
			}
			done++
			continue
		}
		if next.IsZero() {
			s.t.Fatal("nothing leased and nothing in flight")
		}
		s.clk.advance(next.Sub(s.at()))
	}
}

func newBusySim(t *testing.T, pool string, lat, late time.Duration, pages int, evidence bool) *busySim {
	learn := PaceLearning{Min: 100 * time.Millisecond, Max: 8 * time.Second, Canaries: 2, Clean: 4}
	return &busySim{learnSim: newLearnSim(t, pool, learn, 8, time.Second), slots: 8, pages: pages,
		lat: lat, late: late, evidence: evidence}
}

// TestPaceLearnerCountsTheGapItsRequestsKept: answers that take 300 ms
// (a slow site, a loaded worker) do not stop the learner: it counts the
// gap between a canary's answer and its next request, which the releases
// carry (Outcome.Sent), not the gap between its answers, and comes down
// to where the site's hidden 1 s gap between requests holds (its pace
// plus the answer's 300 ms). Without that evidence the learner stalls
// far above.
func TestPaceLearnerCountsTheGapItsRequestsKept(t *testing.T) {
	s := newBusySim(t, "learn-busy", 300*time.Millisecond, 0, 1, true)
	s.run(2500)
	p := s.pace()
	if p.Value < 700 || p.Value > 770 {
		t.Fatalf("learned pace %d ms, want within 10 %% above 700 ms (the hidden 1 s less the answer's 300 ms): %+v", p.Value, p.State)
	}
	limited := 0
	for _, n := range s.site.limited {
		limited += n
	}
	if limited > 8 {
		t.Fatalf("429s: %v, want one per failed probe", s.site.limited)
	}

	old := newBusySim(t, "learn-busy-old", 300*time.Millisecond, 0, 1, false)
	old.run(2500)
	if p := old.pace(); p.Value < 2000 {
		t.Fatalf("without the releases' evidence the pace came to %d ms: the answers' latency should have hidden the gaps", p.Value)
	}
}

// TestPaceLearnerSkipsALateFirstRequest: a lease whose first request
// went out 400 ms after the proxy was ready (a worker busy elsewhere)
// proves nothing about its pace, once 400 ms is past the slack (10 % and
// 15 ms, PacedSlack): with one page per lease the pace stops above
// 3.85 s; with four pages per lease, the three sent at the lease's pace
// count, and the learner finds the hidden gap.
func TestPaceLearnerSkipsALateFirstRequest(t *testing.T) {
	one := newBusySim(t, "learn-late-one", 0, 400*time.Millisecond, 1, true)
	one.run(600)
	if p := one.pace(); p.Value < 3850 {
		t.Fatalf("pace %d ms from leases whose only request went out 400 ms late, want above 3850 ms: %+v", p.Value, p.State)
	}

	four := newBusySim(t, "learn-late-four", 0, 400*time.Millisecond, 4, true)
	four.run(600)
	if p := four.pace(); p.Value < 1000 || p.Value > 1111 {
		t.Fatalf("pace %d ms from the paced pages of leases, want within 10 %% of the hidden 1000 ms: %+v", p.Value, p.State)
	}
}

// TestACanaryIsRespacedWhenTheProbeSlows: two canaries answer at a probe
// of 1 s (the safe pace 2 s); one is rate-limited there, so the next
// probe is slower (1.8 s). The other canary's next lease runs at 1.8 s,
// so it must not be leased 1 s after its answer, as its release had set:
// the site would see the old probe's gap, and a 429 of it would be
// blamed on the slower pace.
func TestACanaryIsRespacedWhenTheProbeSlows(t *testing.T) {
	s := newLearnSim(t, "learn-respace", PaceLearning{Min: 100 * time.Millisecond, Max: 2 * time.Second,
		Canaries: 2, Clean: 100, Step: 0.5}, 2, time.Second)
	ctx := context.Background()
	lease := func() (*Lease, error) {
		return s.b.Lease(ctx, LeaseRequest{Site: learnSite, Class: Datacenter, Holder: "h", Task: "t", TTL: time.Minute})
	}
	var ls []*Lease
	for len(ls) < 2 {
		l, err := lease()
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	for _, l := range ls {
		if err := s.b.Release(ctx, l, OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	// both are canaries now; their next leases run at the probe, 1 s
	s.clk.advance(1010 * time.Millisecond)
	a, err := lease()
	if err != nil {
		t.Fatal(err)
	}
	if a.MinInterval != time.Second {
		t.Fatalf("canary leased at %s, want the probe 1s", a.MinInterval)
	}
	if err := s.b.Release(ctx, a, RateLimited(time.Second)); err != nil {
		t.Fatal(err)
	}
	if p := s.pace(); p.State["probe"] != "1800" {
		t.Fatalf("probe after a 429 at 1 s: %s, want 1800 ms (halfway to the floor, at most 10 %% faster than 2 s)", p.State["probe"])
	}
	_, err = lease()
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Wait < 700*time.Millisecond {
		t.Fatalf("the other canary, 1.01 s after its answer: %v, want not ready for another ~0.8 s (its next lease runs at 1.8 s)", err)
	}
	s.clk.advance(nr.Wait)
	b, err := lease()
	if err != nil {
		t.Fatal(err)
	}
	if b.Proxy.ID == a.Proxy.ID || b.MinInterval != 1800*time.Millisecond {
		t.Fatalf("leased %s at %s, want the other canary at 1.8 s", b.Proxy.ID, b.MinInterval)
	}
}
