package sessions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/proxies"
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

// TestChangeLinkRefusalWaitsItsRetryAfterOnTheClock: a change link that
// answers 429 twice (Retry-After 7, then none: 5 s) and then 200 is
// called three times, the rotator waiting on its clock what each
// refusal said, counting the refusals; a link that answers 500 is an
// error naming the masked link, not its key.
func TestChangeLinkRefusalWaitsItsRetryAfterOnTheClock(t *testing.T) {
	var mu sync.Mutex
	answers := []int{http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusOK, http.StatusInternalServerError}
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		code := answers[calls]
		calls++
		mu.Unlock()
		if calls == 1 {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	clock := &stepClock{now: time.Unix(1_700_000_000, 0)}
	r := NewRotator(RotatorConfig{Clock: clock})
	p := proxies.Proxy{ID: "modem0", Modem: &proxies.Modem{Method: http.MethodGet, ChangeURL: srv.URL + "/changeip/s3cretkey/m0"}}
	if err := r.callChange(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]time.Duration{7 * time.Second, 5 * time.Second}, clock.waits); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if _, _, refused := r.Counts(); refused != 2 || calls != 3 {
		t.Errorf("%d refusals counted in %d calls, want 2 in 3", refused, calls)
	}
	err := r.callChange(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "s3cretkey") {
		t.Errorf("a 500 from the link: %v, want an error naming the status and not the key", err)
	}
}
