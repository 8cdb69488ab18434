package browser_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"crawlq/fetcher"
	"crawlq/testbed"
)

// holdingGate is a session gate (pacer) that, from the hold-th request
// on, holds each request until its context ends (the session can send
// no more); held is closed when the first request is held.
type holdingGate struct {
	pacer
	hold int
	held chan struct{}
	once sync.Once
}

func (g *holdingGate) gate(ctx context.Context) error {
	g.mu.Lock()
	n := g.sent
	g.mu.Unlock()
	if g.hold > 0 && n+1 >= g.hold {
		g.once.Do(func() { close(g.held) })
		<-ctx.Done()
		return ctx.Err()
	}
	return g.pacer.gate(ctx)
}

func (g *holdingGate) granted() []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Time(nil), g.grants...)
}

// TestInterruptedSolveSendsNothingUnpaced: a solve ended in the middle
// of its visit (the job's context cancelled, or the browser closed by a
// stopping worker) lets no request reach the site past the session's
// gate. The challenge's proof of work is made slow, so the page's reload
// comes while the solve is ending: Chromium lets a request still paused
// at the interception go (without the session's User-Agent) when the
// target closes, so each must be answered before. The site's log must
// show no request the gate did not grant, each after its grant, and I2.
func TestInterruptedSolveSendsNothingUnpaced(t *testing.T) {
	tests := []struct {
		name string
		// hold: the gate holds from this request on (0: never).
		hold int
		// closeBrowser: the browser is closed instead of the job ended.
		closeBrowser bool
		// onFirstAnswer: the interruption comes at the first page's
		// answer (the challenge script then runs); else when a request
		// is held at the gate.
		onFirstAnswer bool
	}{
		{name: "job ended while the challenge script runs", onFirstAnswer: true},
		{name: "job ended with the reload held at the gate", hold: 3},
		{name: "browser closed while the challenge script runs", onFirstAnswer: true, closeBrowser: true},
		{name: "browser closed with the reload held at the gate", hold: 3, closeBrowser: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rules := testbed.DefaultRules()[testbed.SiteWildberries]
			rules.Challenge = &testbed.ChallengeRule{Bits: 21} // a proof of work of some 2M hashes
			tb, b, _, proxy := farmBrowser(ctx, t, testbed.Config{Proxies: 1, Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: rules},
				Farm: testbed.FarmConfig{Auth: true}}, time.Minute)
			g := &holdingGate{pacer: pacer{gap: tb.Rules()[testbed.SiteWildberries].MinInterval}, hold: tc.hold, held: make(chan struct{})}
			answered := make(chan struct{})
			var once sync.Once
			jctx, endJob := context.WithCancel(ctx)
			defer endJob()
			done := make(chan error, 1)
			go func() {
				_, err := b.Solve(jctx, fetcher.BrowserJob{URL: tb.SiteURL(testbed.SiteWildberries) + "/", Proxy: proxy, UserAgent: chromiumUA,
					Gate: g.gate, Done: func() { g.done(); once.Do(func() { close(answered) }) }, Clearance: testbed.ChallengeCookie[testbed.SiteWildberries],
					Cleared: func(status int, body []byte) bool { return !strings.Contains(string(body), `id="s-key"`) }})
				done <- err
			}()
			trigger := g.held
			if tc.onFirstAnswer {
				trigger = answered
			}
			select {
			case <-trigger:
			case err := <-done:
				t.Fatalf("solve ended before the interruption: %v", err)
			case <-ctx.Done():
				t.Fatal("the visit did not get to the interruption point")
			}
			pid := b.PID()
			if tc.closeBrowser {
				b.Close()
			} else {
				endJob()
			}
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("solve: %v; want it ended by the interruption", err)
				}
			case <-ctx.Done():
				t.Fatal("solve did not end after the interruption")
			}
			if b.Live() != 0 {
				t.Errorf("%d browser contexts open after the solve; want 0", b.Live())
			}
			// Whatever the browser still had is sent by now: it is gone.
			b.Close()
			waitGone(t, pid)
			grants := g.granted()
			entries := tb.Log.Entries()
			if len(entries) > len(grants) {
				t.Errorf("the site saw %d requests, the gate granted %d", len(entries), len(grants))
			}
			for i, e := range entries {
				if i < len(grants) && e.Start.Before(grants[i]) {
					t.Errorf("request %d (%s, challenge %q) reached the site at %s, before its grant at %s", i, e.Path, e.Challenge,
						e.Start.Format("15:04:05.000"), grants[i].Format("15:04:05.000"))
				}
			}
			if rep := tb.Check(); !rep.OK() {
				t.Errorf("politeness: %+v", rep)
			}
			for i, e := range entries {
				t.Logf("site request %d: %s %s challenge %q verdict %s", i, e.Start.Format("15:04:05.000"), e.Path, e.Challenge, e.Verdict)
			}
		})
	}
}
