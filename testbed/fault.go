package testbed

import (
	"fmt"
	"time"
)

// Fault is how a farm proxy misbehaves. The zero Fault is a healthy proxy;
// fields combine (a proxy may be both slow and flaky).
type Fault struct {
	// Dead closes the proxy's listener (clients get connection refused) and
	// cuts its open connections.
	Dead bool `json:"dead,omitempty"`
	// Slow is latency added before each proxied request or tunnel opens.
	Slow time.Duration `json:"slow,omitempty"`
	// Flaky is the share (0..1) of accepted connections the proxy drops at
	// once, drawn from the farm's seeded RNG, so runs repeat.
	Flaky float64 `json:"flaky,omitempty"`
}

// Healthy reports whether f is the zero fault.
func (f Fault) Healthy() bool { return f == Fault{} }

// String describes f for logs ("ok", "dead", "slow=1s flaky=0.30").
func (f Fault) String() string {
	if f.Dead {
		return "dead"
	}
	s := ""
	if f.Slow > 0 {
		s = fmt.Sprintf("slow=%s", f.Slow)
	}
	if f.Flaky > 0 {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("flaky=%.2f", f.Flaky)
	}
	if s == "" {
		return "ok"
	}
	return s
}
