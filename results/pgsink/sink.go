package pgsink

import (
	"crawlq/internal/mask"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/internal/backoff"
	"crawlq/results"
	"crawlq/results/item"
)

// Config configures a Sink. Zero fields take the defaults named.
type Config struct {
	// Redis holds the results stream. Required.
	Redis redis.UniversalClient
	// Postgres is the database URL. Required.
	Postgres string
	// Consumer names this sink in the group. Default host-pid-start.
	Consumer string
	// Batch is the most entries read and written at once. Default 5000.
	Batch int
	// ClaimIdle: entries another consumer has held unacknowledged this
	// long are taken over (XAUTOCLAIM): that sink died. Default 30s.
	ClaimIdle time.Duration
	// Block is how long one read waits for new entries. Default 1s.
	Block time.Duration
	// Logger is the sink's log. Default zap.NewNop().
	Logger *zap.Logger
	// Metrics, if set, is told every batch.
	Metrics *Metrics
	// OnCommit, if set, is told every committed batch: entries and rows
	// added (for tests and the demo's report).
	OnCommit func(entries, added int)
}

func (c *Config) withDefaults() {
	if c.Consumer == "" {
		host, _ := os.Hostname()
		c.Consumer = fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixMilli())
	}
	if c.Batch <= 0 {
		c.Batch = 5000
	}
	if c.ClaimIdle <= 0 {
		c.ClaimIdle = 30 * time.Second
	}
	if c.Block <= 0 {
		c.Block = time.Second
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Sink drains the results stream into PostgreSQL.
type Sink struct {
	cfg   Config
	store *Store
	rows  atomic.Int64
	ready chan struct{}
	once  sync.Once
}

// batch is what one read gave: the observations and their entries' IDs,
// and the entries that are not items, kept as rejected.
type batch struct {
	obs      []Observation
	ids      []string
	rejected []Rejection
}

// entries is how many stream entries b holds.
func (b batch) entries() int { return len(b.ids) + len(b.rejected) }

// New builds a Sink; Run connects and drains.
func New(cfg Config) *Sink {
	cfg.withDefaults()
	return &Sink{cfg: cfg, ready: make(chan struct{})}
}

// Ready is closed once Run has connected and the schema is migrated (an
// alert Sender waits for it: the outbox exists from then on).
func (s *Sink) Ready() <-chan struct{} { return s.ready }

// Metrics is the sink's metrics (Config.Metrics; nil records nothing).
func (s *Sink) Metrics() *Metrics { return s.cfg.Metrics }

// Rows is how many observations this sink added so far.
func (s *Sink) Rows() int64 { return s.rows.Load() }

// Consumer is the sink's name in the consumer group (Config.Consumer or
// its default).
func (s *Sink) Consumer() string { return s.cfg.Consumer }

// Run marks the stream (results.MarkSink), removes the group's consumers
// idle for ClaimIdle with nothing pending, connects to PostgreSQL
// (applying the migrations) and drains the stream until ctx ends. A
// reader fetches the next batch while the writer commits the current one;
// an entry is acknowledged only after its row, or its rejected row (an
// entry that is not an item), committed, so a sink killed at any point
// leaves it pending, to be claimed by the next sink. PostgreSQL errors are
// retried until ctx ends, but for a *PermanentError (a database or role
// that does not exist, authentication refused, a newer schema), which Run
// returns. Run returns nil when ctx ends.
func (s *Sink) Run(ctx context.Context) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := s.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer func() { _ = s.store.Close() }()
	s.once.Do(func() { close(s.ready) })
	s.cfg.Logger.Info("sink started", zap.String("consumer", s.cfg.Consumer), zap.String("postgres", mask.URL(s.cfg.Postgres)))
	if err := s.drain(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// drain commits the batches a reader fetches meanwhile, until ctx ends or
// a batch fails for good.
func (s *Sink) drain(ctx context.Context) error {
	batches := make(chan batch, 1)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	readDone := make(chan error, 1)
	go func() { readDone <- s.read(rctx, batches) }()
	for b := range batches {
		if err := s.commit(ctx, b); err != nil {
			stop()
			for range batches {
			}
			<-readDone
			return err
		}
	}
	return <-readDone
}

// start marks the stream and removes the consumers of sinks that stopped:
// idle for ClaimIdle with nothing pending.
func (s *Sink) start(ctx context.Context) error {
	if err := results.MarkSink(ctx, s.cfg.Redis); err != nil {
		return err
	}
	gone, err := results.RemoveIdleConsumers(ctx, s.cfg.Redis, s.cfg.ClaimIdle)
	switch {
	case err != nil:
		s.cfg.Logger.Warn("idle consumers not removed", zap.Error(err))
	case len(gone) > 0:
		s.cfg.Logger.Info("removed idle consumers of the sink group", zap.Strings("consumers", gone))
	}
	return nil
}

// connect opens the store, retrying while PostgreSQL is down (with one
// log line each time), until ctx ends or the error is permanent.
func (s *Sink) connect(ctx context.Context) error {
	retry := retryBackoff()
	for {
		st, err := Open(ctx, s.cfg.Postgres)
		if err == nil {
			s.store = st
			return nil
		}
		if Permanent(err) || ctx.Err() != nil {
			return err
		}
		s.cfg.Logger.Warn("postgres not ready; retrying", zap.Error(err), zap.Duration("in", retry.Next()))
		if err := retry.Wait(ctx); err != nil {
			return err
		}
	}
}

// commit writes b until it commits, then acknowledges its entries and trims
// what the group acknowledged.
func (s *Sink) commit(ctx context.Context, b batch) error {
	retry := retryBackoff()
	for {
		started := time.Now()
		added, err := s.write(ctx, b)
		if err == nil {
			s.rows.Add(int64(added))
			s.cfg.Metrics.batch(b.entries(), added, time.Since(started))
			s.logRejected(b.rejected)
			if s.cfg.OnCommit != nil {
				s.cfg.OnCommit(b.entries(), added)
			}
			// Acked even when the sink is being stopped: the rows are
			// committed, and a stop must not leave them pending (a
			// graceful stop then counts as a crash). Bounded by ackGrace.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackGrace)
			defer cancel()
			return s.ack(actx, b)
		}
		if Permanent(err) || ctx.Err() != nil {
			return err
		}
		s.cfg.Metrics.failed()
		s.cfg.Logger.Warn("batch not written; retrying", zap.Int("entries", b.entries()),
			zap.String("error", oneLine(err)), zap.Duration("in", retry.Next()))
		if err := retry.Wait(ctx); err != nil {
			return err
		}
	}
}

// logRejected says, on one line, that entries were kept as rejected.
func (s *Sink) logRejected(rs []Rejection) {
	if len(rs) > 0 {
		s.cfg.Logger.Warn("entries that are not items kept in the rejected table", zap.Int("entries", len(rs)),
			zap.String("first", rs[0].ID), zap.String("reason", rs[0].Reason))
	}
}

// write commits b, reconnecting when the connection broke.
func (s *Sink) write(ctx context.Context, b batch) (int, error) {
	if b.entries() == 0 {
		return 0, nil
	}
	if s.store.conn.IsClosed() {
		st, err := Open(ctx, s.cfg.Postgres)
		if err != nil {
			return 0, err
		}
		_ = s.store.Close()
		s.store = st
	}
	n, err := s.store.Write(ctx, b.obs, b.rejected)
	if err != nil && !s.store.conn.IsClosed() && s.store.conn.PgConn().TxStatus() != 'I' {
		_ = s.store.Close() // an unknown state: start over on a new connection
	}
	return n, err
}

// retryBackoff is the waits between the tries of a PostgreSQL or Redis
// write the sink retries: 100ms, doubled up to 5s.
func retryBackoff() *backoff.Backoff { return backoff.New(100*time.Millisecond, 5*time.Second) }

// ackGrace is how long a committed batch's ack may go on once the sink
// is told to stop.
const ackGrace = 5 * time.Second

// ack acknowledges b's entries (counting the rejected ones) and trims the
// stream, retrying while Redis does not answer (the rows are committed: a
// redelivery would add none).
func (s *Sink) ack(ctx context.Context, b batch) error {
	rejected := make([]string, len(b.rejected))
	for i, r := range b.rejected {
		rejected[i] = r.ID
	}
	retry := retryBackoff()
	for {
		a, err := results.Ack(ctx, s.cfg.Redis, b.ids, rejected)
		if err == nil {
			s.cfg.Metrics.rejected(a.Rejected)
			if _, err := results.TrimAcked(ctx, s.cfg.Redis); err != nil {
				s.cfg.Logger.Debug("trim", zap.Error(err))
			}
			return nil
		}
		if ctx.Err() != nil {
			return nil // pending: the next sink claims them and adds no row
		}
		s.cfg.Logger.Warn("ack failed; retrying", zap.Error(err))
		if retry.Wait(ctx) != nil {
			return nil
		}
	}
}

// read feeds batches until ctx ends: first what dead consumers left
// pending (XAUTOCLAIM, again every ClaimIdle/2), else new entries.
func (s *Sink) read(ctx context.Context, out chan<- batch) error {
	defer close(out)
	var nextClaim time.Time
	for ctx.Err() == nil {
		var msgs []redis.XMessage
		var err error
		if now := time.Now(); !now.Before(nextClaim) {
			msgs, err = s.claim(ctx)
			if len(msgs) == 0 && err == nil {
				nextClaim = now.Add(s.cfg.ClaimIdle / 2)
			}
		}
		if len(msgs) == 0 && err == nil {
			msgs, err = s.readNew(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if results.IsNoGroup(err) {
				err = results.MarkSink(ctx, s.cfg.Redis) // the group was removed: make it again
			}
			s.cfg.Logger.Warn("read the results stream", zap.Error(err))
			_ = backoff.Sleep(ctx, time.Second)
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		select {
		case out <- decodeBatch(msgs):
		case <-ctx.Done():
		}
	}
	return nil
}

func (s *Sink) readNew(ctx context.Context) ([]redis.XMessage, error) {
	res, err := s.cfg.Redis.XReadGroup(ctx, &redis.XReadGroupArgs{Group: results.SinkGroup, Consumer: s.cfg.Consumer,
		Streams: []string{results.StreamKey, ">"}, Count: int64(s.cfg.Batch), Block: s.cfg.Block}).Result()
	if errors.Is(err, redis.Nil) || len(res) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return res[0].Messages, nil
}

// claim takes over entries pending longer than ClaimIdle.
func (s *Sink) claim(ctx context.Context) ([]redis.XMessage, error) {
	msgs, _, err := s.cfg.Redis.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: results.StreamKey, Group: results.SinkGroup,
		Consumer: s.cfg.Consumer, MinIdle: s.cfg.ClaimIdle, Start: "0-0", Count: int64(s.cfg.Batch)}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if len(msgs) > 0 {
		s.cfg.Logger.Info("claimed entries of a dead sink", zap.Int("entries", len(msgs)))
		s.cfg.Metrics.claimed(len(msgs))
	}
	return msgs, err
}

// decodeBatch turns stream entries into observations, and those that are
// not items into rejections.
func decodeBatch(msgs []redis.XMessage) batch {
	b := batch{obs: make([]Observation, 0, len(msgs)), ids: make([]string, 0, len(msgs))}
	for _, m := range msgs {
		o, err := Decode(m)
		if err != nil {
			b.rejected = append(b.rejected, reject(m, err))
			continue
		}
		b.obs = append(b.obs, o)
		b.ids = append(b.ids, m.ID)
	}
	return b
}

// Decode reads one stream entry; an entry that is not an item (it cannot
// become a row) is an error saying why: the sink keeps it as rejected.
func Decode(m redis.XMessage) (Observation, error) {
	ms, seq, ok := parseID(m.ID)
	if !ok {
		return Observation{}, fmt.Errorf("stream ID %q is not MS-SEQ", m.ID)
	}
	raw, ok := m.Values["item"].(string)
	if !ok {
		return Observation{}, errors.New("no item field")
	}
	var it item.Item
	if err := json.Unmarshal([]byte(raw), &it); err != nil {
		return Observation{}, notItem(err)
	}
	if it.ID == "" {
		return Observation{}, errors.New("item has no id")
	}
	if s, _ := m.Values["site"].(string); it.Site == "" {
		it.Site = s
	}
	task, _ := m.Values["task"].(string)
	sched, _ := m.Values["schedule"].(string)
	return Observation{EntryMS: ms, EntrySeq: seq, Item: it, Task: task, Schedule: sched}, nil
}

func parseID(id string) (ms, seq int64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	ms, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return ms, seq, found && err1 == nil && err2 == nil
}
