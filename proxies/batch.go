package proxies

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher lets the scripts of concurrent callers in one process share round
// trips to Redis, as auto-pipelining clients do: a caller queues its
// command; while fewer than maxFlights pipelines are in flight it sends the
// queue itself, else it waits and the next pipeline carries it. Every
// script still runs alone and atomically in Redis; what is shared is the
// socket read and write, which on a busy Redis cost more than the scripts
// (measured: a PING costs Redis some 18µs of syscalls on this 2-core box,
// the lease script 14µs). A lone caller pays nothing: it finds no flight
// and sends at once.
//
// A queued command is sent even if its caller's context ends meanwhile
// (the caller still waits for it): a lease asked for is never half-known.
// The client's read and write timeouts bound every flight.
type batcher struct {
	rdb        redis.UniversalClient
	maxFlights int
	maxBatch   int
	// replicas, if > 0, closes every round trip with one WAIT for that
	// many replicas (failover.go); waitTimeout bounds it.
	replicas    int
	waitTimeout time.Duration

	mu      sync.Mutex
	queue   []*batchCall
	flights int
}

// batchCall is one queued command. done is closed when the command has
// its result; lead (capacity 1) gets the token of a flight: its caller
// sends batches until its own command is done.
type batchCall struct {
	cmd     redis.Cmder
	done    chan struct{}
	lead    chan struct{}
	leading bool // was given a flight token (under batcher.mu)
	// acked: the round trip's WAIT saw enough replicas (set before done)
	acked bool
}

// Default limits: a few flights in flight keep the client preparing one
// pipeline while Redis runs another; batches are capped so one slow reply
// delays few callers.
const (
	defaultFlights  = 4
	defaultMaxBatch = 64
)

func newBatcher(rdb redis.UniversalClient, flights int) *batcher {
	return &batcher{rdb: rdb, maxFlights: flights, maxBatch: defaultMaxBatch}
}

// process runs cmd, alone or in a shared pipeline, and returns its error.
//
// The flights are tokens: b.flights of them exist, each held by a flying
// caller or waiting in a queued caller's lead channel. A flight ends by
// passing its token to the first queued caller without one, or, with no
// such caller, by dropping it; so while anything is queued some token's
// holder will send it.
func (b *batcher) process(ctx context.Context, cmd redis.Cmder) error {
	_, err := b.processAcked(ctx, cmd)
	return err
}

// processAcked is process that also says whether the round trip's WAIT
// saw b.replicas replicas acknowledge cmd (always true without WAIT).
func (b *batcher) processAcked(ctx context.Context, cmd redis.Cmder) (acked bool, err error) {
	if err := ctx.Err(); err != nil {
		cmd.SetErr(err)
		return false, err
	}
	c := &batchCall{cmd: cmd, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.flights < b.maxFlights && len(b.queue) == 0 {
		// a free flight and nobody waiting: send alone, with no queueing
		b.flights++
		b.mu.Unlock()
		b.send(ctx, []*batchCall{c})
		b.land()
		return c.acked, cmd.Err()
	}
	b.queue = append(b.queue, c)
	if b.flights < b.maxFlights {
		b.flights++
		b.give(c)
	}
	b.mu.Unlock()
	for {
		select {
		case <-c.lead:
			b.fly(ctx, c)
		case <-c.done:
			// a token given while c was queued is sent before c is done
			select {
			case <-c.lead:
				b.land()
			default:
			}
			return c.acked, cmd.Err()
		}
	}
}

// give hands c a flight token. Under b.mu.
func (b *batcher) give(c *batchCall) {
	c.leading = true
	c.lead <- struct{}{}
}

// pass gives the token of an ending flight to the first queued caller
// without one, or drops it. Under b.mu.
func (b *batcher) pass() {
	for _, q := range b.queue {
		if !q.leading {
			b.give(q)
			return
		}
	}
	b.flights--
}

// land ends a flight: its token passes on or is dropped.
func (b *batcher) land() {
	b.mu.Lock()
	b.pass()
	b.mu.Unlock()
}

// fly sends batches from the head of the queue until own is done or the
// queue is empty (own then rides in another flight), then passes the token.
func (b *batcher) fly(ctx context.Context, own *batchCall) {
	ctx = context.WithoutCancel(ctx) // the batch carries other callers' commands
	for {
		b.mu.Lock()
		n := min(len(b.queue), b.maxBatch)
		if n == 0 {
			b.pass()
			b.mu.Unlock()
			return
		}
		batch := make([]*batchCall, n)
		copy(batch, b.queue)
		clear(b.queue[:n]) // the backing array must not keep them alive
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.send(ctx, batch)
		for _, c := range batch {
			close(c.done)
		}
		select {
		case <-own.done:
			b.land()
			return
		default:
		}
	}
}

// send runs batch: one command as is, more in one pipeline, closed by one
// WAIT when b.replicas is set. Each command gets its own result or error,
// and its acked flag.
func (b *batcher) send(ctx context.Context, batch []*batchCall) {
	if len(batch) == 1 && b.replicas <= 0 {
		_ = b.rdb.Process(ctx, batch[0].cmd)
		batch[0].acked = true
		return
	}
	pipe := b.rdb.Pipeline()
	for _, c := range batch {
		_ = pipe.Process(ctx, c.cmd)
	}
	var wait *redis.IntCmd
	if b.replicas > 0 {
		wait = redis.NewIntCmd(ctx, "wait", b.replicas, b.waitTimeout.Milliseconds())
		_ = pipe.Process(ctx, wait)
	}
	_, _ = pipe.Exec(ctx)
	acked := wait == nil || (wait.Err() == nil && wait.Val() >= int64(b.replicas))
	for _, c := range batch {
		c.acked = acked
	}
}
