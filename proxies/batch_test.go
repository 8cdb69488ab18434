package proxies

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
)

// flightHook counts round trips and the commands each carried, tracks the
// most in flight at once, and can hold the round trips of a marked command
// until released.
type flightHook struct {
	mu       sync.Mutex
	trips    []int // commands per round trip
	inFlight atomic.Int32
	most     atomic.Int32
	hold     string        // a command whose first argument names this key waits...
	release  chan struct{} // ...until this closes
	held     chan struct{} // closed when the held command arrived
}

func (h *flightHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *flightHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if setup(cmd) {
			return next(ctx, cmd)
		}
		h.enter(1)
		defer h.inFlight.Add(-1)
		if h.hold != "" && len(cmd.Args()) > 1 && cmd.Args()[1] == h.hold {
			close(h.held)
			<-h.release
		}
		return next(ctx, cmd)
	}
}

func (h *flightHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if setup(cmds[0]) {
			return next(ctx, cmds)
		}
		h.enter(len(cmds))
		defer h.inFlight.Add(-1)
		return next(ctx, cmds)
	}
}

// setup is a command go-redis sends on its own: a new connection's
// handshake, or the test's flush.
func setup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "client", "select", "auth", "flushdb", "ping":
		return true
	}
	return false
}

func (h *flightHook) enter(n int) {
	m := h.inFlight.Add(1)
	for cur := h.most.Load(); m > cur && !h.most.CompareAndSwap(cur, m); cur = h.most.Load() {
	}
	h.mu.Lock()
	h.trips = append(h.trips, n)
	h.mu.Unlock()
}

func (b *batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// TestBatcherSharesRoundTrip holds the one flight while 31 callers queue,
// then checks they all ride the next round trip and each gets its own reply.
func TestBatcherSharesRoundTrip(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBProxies)
	h := &flightHook{hold: "batch:hold", release: make(chan struct{}), held: make(chan struct{})}
	rdb.AddHook(h)
	ctx := context.Background()
	b := newBatcher(rdb, 1)
	var wg sync.WaitGroup
	wg.Go(func() { _ = b.process(ctx, redis.NewStringCmd(ctx, "get", "batch:hold")) })
	<-h.held
	const n = 31
	cmds := make([]*redis.IntCmd, n)
	for i := range cmds {
		cmds[i] = redis.NewIntCmd(ctx, "incrby", fmt.Sprintf("batch:k%d", i), i+1)
		wg.Go(func() { _ = b.process(ctx, cmds[i]) })
	}
	for deadline := time.Now().Add(10 * time.Second); b.queued() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // all 31 must wait behind the held flight
			close(h.release)
			t.Fatalf("%d of %d callers queued behind the one flight", b.queued(), n)
		}
	}
	close(h.release)
	wg.Wait()
	for i, c := range cmds {
		if v, err := c.Result(); err != nil || v != int64(i+1) {
			t.Errorf("caller %d: got %d, %v; want its own reply %d", i, v, err, i+1)
		}
	}
	if want := []int{1, n}; fmt.Sprint(h.trips) != fmt.Sprint(want) {
		t.Fatalf("commands per round trip %v, want %v", h.trips, want)
	}
}

// TestBatcherKeepsFlightCap runs 64 callers x 50 scripts on 3 flights: every
// reply is the caller's own, and never more than 3 round trips are in
// flight.
func TestBatcherKeepsFlightCap(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBProxies)
	h := &flightHook{}
	rdb.AddHook(h)
	ctx := context.Background()
	b := newBatcher(rdb, 3)
	script := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	if err := script.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Go(func() {
			key := fmt.Sprintf("batch:g%d", g)
			for want := int64(1); want <= 50; want++ {
				cmd := redis.NewIntCmd(ctx, "evalsha", script.Hash(), 1, key)
				if err := b.process(ctx, cmd); err != nil || cmd.Val() != want {
					errs <- fmt.Errorf("caller %d: got %d, %v; want %d", g, cmd.Val(), err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := h.most.Load(); m > 3 {
		t.Fatalf("%d round trips in flight at once, cap 3", m)
	}
	if b.flights != 0 || len(b.queue) != 0 {
		t.Fatalf("after the callers: %d flights, %d queued; want 0, 0", b.flights, len(b.queue))
	}
}

// TestBatcherEndedContext refuses a call whose context already ended,
// with the command carrying the error.
func TestBatcherEndedContext(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBProxies)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd := redis.NewStatusCmd(ctx, "ping")
	if err := newBatcher(rdb, 1).process(ctx, cmd); !errors.Is(err, context.Canceled) || !errors.Is(cmd.Err(), context.Canceled) {
		t.Fatalf("process: %v, cmd: %v; want context.Canceled", err, cmd.Err())
	}
}
