// Package redisx opens the Redis connections crawlq runs on: a URL of one
// server (redis://, rediss://), a Sentinel group (redis-sentinel://) or a
// Cluster (redis-cluster://), with password and DB, or "embedded", an
// in-process miniredis for zero-setup runs. It gives both a go-redis
// UniversalClient (broker, sessions, results) and the matching Asynq
// connection option (queues).
package redisx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Embedded is the --redis value that starts an in-process Redis.
const Embedded = "embedded"

// DefaultURL is used when neither --redis nor CRAWLQ_REDIS is set.
const DefaultURL = "redis://127.0.0.1:6379/0"

// Conn is an open Redis: one go-redis client and the Asynq option for the
// same servers and DB.
type Conn struct {
	// Client is shared by the broker, sessions and results: a *redis.Client
	// (one server, Sentinel) or a *redis.ClusterClient.
	Client redis.UniversalClient
	// Asynq connects Asynq clients, servers and inspectors to the same Redis.
	Asynq asynq.RedisConnOpt
	// URL is the address with any password masked, safe to print.
	URL string
	// Target is the parsed URL (for the embedded Redis: its loopback
	// address as a redis:// target).
	Target *Target

	mini    *miniredis.Miniredis
	stopTTL func()
}

// Open connects to raw (a URL or "embedded") and checks that Redis answers.
// The error names the masked address: a *URLError for a bad URL,
// ErrNoAnswer for a Redis that does not answer.
func Open(ctx context.Context, raw string) (*Conn, error) {
	if raw == "" {
		raw = DefaultURL
	}
	if raw == Embedded {
		return openEmbedded()
	}
	t, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	c := &Conn{Client: t.NewClient(), Asynq: t.AsynqOpt(), URL: t.Masked(), Target: t}
	if err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func openEmbedded() (*Conn, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	t := &Target{Topology: Single, Addrs: []string{m.Addr()}, masked: "redis://" + m.Addr() + "/0"}
	return &Conn{Client: t.NewClient(), Asynq: t.AsynqOpt(), URL: "embedded (" + m.Addr() + ")", Target: t,
		mini: m, stopTTL: expireByClock(m, ttlTick)}, nil
}

// ttlTick is how often the embedded Redis moves its TTLs on by the wall
// clock: a key outlives its TTL by about this much (more when a tick is
// slow, see expireByClock).
const ttlTick = 50 * time.Millisecond

// expireByClock makes m expire keys by the wall clock, as a real Redis
// does, moving every TTL on every tick until the returned stop is called.
// A tick walks every key (sorted), so the next one waits at least 20
// times as long as the last took: at most ~5% of a core however many
// keys there are. (miniredis's own ClockTTL walks them before every
// command: with the thousands of task keys of a crawl, a command cost
// milliseconds.)
func expireByClock(m *miniredis.Miniredis, every time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(every)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
				t.Reset(max(every, 20*time.Since(now)))
			}
		}
	}()
	return func() { close(quit); <-done }
}

// ErrNoAnswer is a Redis that did not answer a ping within 3 seconds.
var ErrNoAnswer = errors.New("does not answer")

// Ping checks that Redis answers within 3 seconds, else ErrNoAnswer.
func (c *Conn) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s %w: %v", c.URL, ErrNoAnswer, scrub(err))
	}
	return nil
}

// Embedded reports whether this is the in-process Redis.
func (c *Conn) Embedded() bool { return c.mini != nil }

// Close closes the client and stops an embedded Redis.
func (c *Conn) Close() {
	_ = c.Client.Close()
	if c.mini != nil {
		c.stopTTL()
		c.mini.Close()
	}
}

// scrub drops wrapped errors that could carry the URL, keeping the message.
func scrub(err error) error {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timed out")
	}
	return err
}
