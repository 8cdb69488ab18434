package proxies

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// scriptGate holds the broker's script calls on one client while armed:
// the first one held closes held, and all go on once open is closed (a
// call whose context ends first fails, and sets gaveUp).
type scriptGate struct {
	armed, gaveUp atomic.Bool
	heldOnce      sync.Once
	openOnce      sync.Once
	held, open    chan struct{}
}

func newScriptGate() *scriptGate {
	return &scriptGate{held: make(chan struct{}), open: make(chan struct{})}
}

func (g *scriptGate) release() { g.openOnce.Do(func() { close(g.open) }) }

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if g.armed.Load() && strings.HasPrefix(cmd.Name(), "eval") {
			g.heldOnce.Do(func() { close(g.held) })
			select {
			case <-g.open:
			case <-ctx.Done():
				g.gaveUp.Store(true)
				return ctx.Err()
			}
		}
		return next(ctx, cmd)
	}
}

// TestFallbackLeasesDuringTheReturn: a return to the broker does not hold
// the lock Lease and Release take across its round trips. With the
// return's first call to the broker held at its Redis, server a still
// leases locally and releases its open local lease; once the call goes
// on, the return tells the broker what changed meanwhile: the lease
// opened during the return is registered too, and the one released is
// cooling on the broker (I2).
func TestFallbackLeasesDuringTheReturn(t *testing.T) {
	c := newFBCluster(t, 30)
	ctx, fb := context.Background(), c.fb["a"]
	gate := newScriptGate()
	c.primary["a"].Redis().AddHook(gate)
	t.Cleanup(gate.release)
	c.redis.stop()
	c.waitDown(t)
	first, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "a-first", TTL: time.Hour})
	if err != nil || first.Token >= 0 {
		t.Fatalf("local lease in fallback: %+v, %v", first, err)
	}
	gate.armed.Store(true)
	c.redis.start()
	select {
	case <-gate.held: // the return is registering first
	case <-time.After(10 * time.Second):
		t.Fatal("server a never began its return")
	}
	during := leaseAndRelease(t, fb, first)
	if gate.gaveUp.Load() || !fb.Status().Fallback {
		t.Fatal("Lease and Release were served only once the return's held call had given up")
	}
	gate.release()
	waitFor(t, "every server is back on the broker", c.allUp)
	checkRegistered(t, c, "a", during, "wb")
	checkBrokerPaces(t, c, first)
}

// leaseAndRelease leases locally on fb and releases open, bounded by a
// deadlock guard (a Lease or Release waiting for the return never ends
// before it); it returns the new lease.
func leaseAndRelease(t *testing.T, fb *FallbackBroker, open *Lease) *Lease {
	t.Helper()
	ctx := context.Background()
	type result struct {
		l        *Lease
		err, rel error
	}
	done := make(chan result, 1)
	go func() {
		l, err := fb.Lease(ctx, LeaseRequest{Site: "wb", Class: Datacenter, Holder: "a", Task: "a-during", TTL: time.Hour})
		done <- result{l, err, fb.Release(ctx, open, OK(time.Millisecond))}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.l.Token >= 0 || r.rel != nil {
			t.Fatalf("during the return: lease %+v, %v; release %v; want a local lease and the release", r.l, r.err, r.rel)
		}
		return r.l
	case <-time.After(10 * time.Second):
		t.Fatal("Lease and Release waited for the return's call to the broker")
		return nil
	}
}
