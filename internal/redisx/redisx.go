// Package redisx opens the Redis connections crawlq runs on: a URL
// (redis://, rediss://, with password and DB) or "embedded", an in-process
// miniredis for zero-setup runs. It gives both a go-redis client (broker,
// sessions, results) and the matching Asynq connection option (queues).
package redisx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
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
// same server and DB.
type Conn struct {
	// Client is shared by the broker, sessions and results.
	Client *redis.Client
	// Asynq connects Asynq clients, servers and inspectors to the same Redis.
	Asynq asynq.RedisClientOpt
	// URL is the address with any password masked, safe to print.
	URL string

	mini    *miniredis.Miniredis
	stopTTL func()
}

// Open connects to raw (a URL or "embedded") and checks that Redis answers.
// The error names the masked address and says what to do.
func Open(ctx context.Context, raw string) (*Conn, error) {
	if raw == "" {
		raw = DefaultURL
	}
	if raw == Embedded {
		return openEmbedded()
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("--redis %q: %w (want redis://[:password@]host:port/db, rediss://… or embedded)", Mask(raw), err)
	}
	c := &Conn{Client: redis.NewClient(opt), Asynq: asynqOpt(opt), URL: Mask(raw)}
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
	opt := &redis.Options{Addr: m.Addr()}
	return &Conn{Client: redis.NewClient(opt), Asynq: asynqOpt(opt), URL: "embedded (" + m.Addr() + ")",
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

// Ping checks that Redis answers within 3 seconds.
func (c *Conn) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s does not answer: %v (start Redis, set --redis/CRAWLQ_REDIS, or use --redis embedded)", c.URL, scrub(err))
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

func asynqOpt(o *redis.Options) asynq.RedisClientOpt {
	return asynq.RedisClientOpt{
		Network: o.Network, Addr: o.Addr, Username: o.Username, Password: o.Password,
		DB: o.DB, TLSConfig: cloneTLS(o.TLSConfig),
	}
}

func cloneTLS(t *tls.Config) *tls.Config {
	if t == nil {
		return nil
	}
	return t.Clone()
}

// Mask hides the password of a Redis URL: redis://user:***@host:port/db.
func Mask(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil {
			return "<unparseable redis url>"
		}
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	s := u.String()
	s, _ = url.PathUnescape(s)
	return s
}

// scrub drops wrapped errors that could carry the URL, keeping the message.
func scrub(err error) error {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timed out")
	}
	return err
}
