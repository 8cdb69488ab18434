package sessions

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/testbed"
)

// stepClock is a Clock whose waits return at once, recording what they
// were asked to wait.
type stepClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// TestChangeLinkAnswersReadAsRefusals: a 429 is a refusal with its
// Retry-After (seconds or an HTTP date; none: 5 s, not given), a 200 is
// none, a 500 is an error naming the masked link, not its key.
func TestChangeLinkAnswersReadAsRefusals(t *testing.T) {
	clock := &stepClock{now: time.Unix(1_700_000_000, 0)}
	type answer struct {
		code  int
		after string
	}
	answers := []answer{{429, "7"}, {429, ""}, {429, clock.now.Add(12 * time.Second).UTC().Format(http.TimeFormat)}, {200, ""}, {500, ""}}
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		a := answers[calls]
		calls++
		mu.Unlock()
		if a.after != "" {
			w.Header().Set("Retry-After", a.after)
		}
		w.WriteHeader(a.code)
	}))
	defer srv.Close()
	r := NewRotator(RotatorConfig{Clock: clock})
	p := proxies.Proxy{ID: "modem0", Modem: &proxies.Modem{Method: http.MethodGet, ChangeURL: srv.URL + "/changeip/s3cretkey/m0"}}
	want := []*proxies.Refusal{{RetryAfter: 7 * time.Second, Given: true}, {RetryAfter: 5 * time.Second},
		{RetryAfter: 12 * time.Second, Given: true}, nil}
	for i, w := range want {
		f, err := r.callChange(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(w, f); d != "" {
			t.Errorf("answer %d (-want +got):\n%s", i, d)
		}
	}
	_, err := r.callChange(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "s3cretkey") {
		t.Errorf("a 500 from the link: %v, want an error naming the status and not the key", err)
	}
}

// TestProviderIntervalLearnedFromItsFirstRefusal: a modem configured to
// change every 4 s whose provider (the testbed's modem node) allows one
// change every 10 s is refused once: the refusal's Retry-After teaches
// the provider's interval, and the next changes, all asked for at once,
// wait it out with the margin and are never refused again. Everything
// runs on one stepped clock (the broker's skew follows it).
func TestProviderIntervalLearnedFromItsFirstRefusal(t *testing.T) {
	md, b, r := changeWorld(t, testbed.ModemConfig{MinInterval: 10 * time.Second}, "4s")
	for i := range 5 {
		changeOnce(t, b, r, i)
	}
	st := md.Stats()
	if len(st.Refusals) != 1 || len(st.Rotations) != 5 || st.TooSoon != 0 {
		t.Fatalf("provider: %d refusals, %d changes, %d too soon; want 1, 5, 0", len(st.Refusals), len(st.Rotations), st.TooSoon)
	}
	ls, err := b.Limits(context.Background())
	if err != nil || len(ls) != 1 || ls[0].Value < 10000 || ls[0].Value > 11100 || ls[0].Min != 4000 {
		t.Fatalf("learned %+v, %v; want the provider's 10 s, at most 1 s more (Retry-After is whole seconds), at least 4 s", ls, err)
	}
}

// TestChangesAtTheProvidersIntervalAreNeverRefused: a modem configured
// at its provider's own 10 s, asked to change again and again, keeps
// ChangeMargin over it: the provider, which keeps its changes' times in
// whole seconds (rounded: a call up to 0.5 s after its interval can be
// refused), refuses none, and nothing is learned.
func TestChangesAtTheProvidersIntervalAreNeverRefused(t *testing.T) {
	md, b, r := changeWorld(t, testbed.ModemConfig{MinInterval: 10 * time.Second, WholeSeconds: true}, "10s")
	for i := range 8 {
		changeOnce(t, b, r, i)
	}
	st := md.Stats()
	if len(st.Refusals) != 0 || len(st.Rotations) != 8 || st.TooSoon != 0 {
		t.Fatalf("provider: %d refusals, %d changes, %d too soon; want 0, 8, 0", len(st.Refusals), len(st.Rotations), st.TooSoon)
	}
	if ls, err := b.Limits(context.Background()); err != nil || len(ls) != 0 {
		t.Fatalf("learned %+v, %v; want nothing", ls, err)
	}
}

// changeWorld is one testbed modem (mc, on a stepped clock the broker's
// skew follows) imported with change_every every, and a rotator on the
// same clock.
func changeWorld(t *testing.T, mc testbed.ModemConfig, every string) (*testbed.Modems, *proxies.RedisBroker, *Rotator) {
	t.Helper()
	ctx := context.Background()
	clock := &stepClock{now: time.Now()}
	start := clock.Now()
	mc.N, mc.Settle, mc.Now = 1, time.Second, clock.Now
	md, err := testbed.StartModems(ctx, mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(md.Close)
	b := proxies.NewRedisBroker(testredis.Client(t, testredis.DBSessions), proxies.Config{Pool: "change-" + t.Name(),
		Clock: func() time.Duration { return clock.Now().Sub(start) }, Sites: map[string]proxies.SiteConfig{"av": {MinInterval: proxies.NoMinInterval}}})
	ps, err := proxies.ParseReader(strings.NewReader(md.URL(0)+" change="+md.ChangeURL(0)+" change_every="+every+" change_settle=1s"), "modems.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
	return md, b, NewRotator(RotatorConfig{Rotations: b, Clock: clock, LeaseTTL: time.Minute})
}

// changeOnce leases the modem, rotates it up to the link's acceptance
// and ends the rotation.
func changeOnce(t *testing.T, b *proxies.RedisBroker, r *Rotator, i int) {
	t.Helper()
	ctx := context.Background()
	l, err := b.Lease(ctx, proxies.LeaseRequest{Site: "av", Class: proxies.Datacenter, Holder: "w", Task: "t", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := b.BeginRotation(ctx, l, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.changeAccepted(ctx, rot); err != nil {
		t.Fatalf("change %d: %v", i, err)
	}
	if err := b.Changed(ctx, rot); err != nil {
		t.Fatal(err)
	}
	if err := b.EndRotation(ctx, rot, proxies.RotationResult{IP: fmt.Sprintf("10.0.0.%d", i+1), Took: time.Second}); err != nil {
		t.Fatal(err)
	}
}
