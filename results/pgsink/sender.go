package pgsink

import (
	"crawlq/internal/mask"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"crawlq/internal/backoff"
)

// SenderConfig configures a Sender. Zero fields take the defaults named.
type SenderConfig struct {
	// Postgres is the database URL. Required.
	Postgres string
	// Client posts the alerts. Default: a client with a 10s timeout.
	Client *http.Client
	// Batch is the most alerts posted in one round, before the pending
	// gauge is read again. Default 20.
	Batch int
	// Poll is how often the outbox is looked at when it had nothing due.
	// Default 1s.
	Poll time.Duration
	// RetryFirst and RetryMax are the waits between the tries of one
	// alert: RetryFirst, doubled up to RetryMax. Default 1s and 5m.
	RetryFirst, RetryMax time.Duration
	// MaxAttempts: after this many failed posts an alert is given up
	// (failed_at). Default 100 (with the default waits, about 8 hours).
	MaxAttempts int
	// Keep is how long delivered and given-up alerts stay in the outbox
	// (their keys keep a redelivered entry from alerting twice; a stream
	// entry is redelivered within minutes, never days). Older ones are
	// deleted once an hour. Default 7 days.
	Keep time.Duration
	// Logger is the sender's log. Default zap.NewNop().
	Logger *zap.Logger
	// Metrics, if set, counts alerts sent, failed posts and the pending.
	Metrics *Metrics
}

func (c *SenderConfig) withDefaults() {
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Batch <= 0 {
		c.Batch = 20
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.RetryFirst <= 0 {
		c.RetryFirst = time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Minute
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 100
	}
	if c.Keep <= 0 {
		c.Keep = 7 * 24 * time.Hour
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Sender delivers the outbox's alerts to their webhooks, on a connection
// of its own, so a slow or dead webhook never holds the sink's writes.
// Each alert is taken in a transaction of its own (FOR UPDATE SKIP
// LOCKED), posted, and marked delivered or failed before that
// transaction commits: two senders (two sinks) never post one alert at
// once, and a sender that dies mid-post releases it at once (its
// connection drops), to be posted again, with the same Idempotency-Key,
// by the next sender. The only repeat left is an alert a webhook
// accepted just before its sender died, before the mark committed.
type Sender struct {
	cfg  SenderConfig
	conn *pgx.Conn
	sent atomic.Int64
	// pruned is when the outbox was last pruned (Keep).
	pruned time.Time
}

// NewSender builds a Sender; Run connects and delivers.
func NewSender(cfg SenderConfig) *Sender {
	cfg.withDefaults()
	return &Sender{cfg: cfg}
}

// Sent is how many alerts this sender delivered.
func (s *Sender) Sent() int64 { return s.sent.Load() }

// outboxRow is one alert taken to post.
type outboxRow struct {
	key, webhook string
	payload      []byte
	attempts     int
}

// Run delivers due alerts until ctx ends; PostgreSQL errors are logged
// and retried. It returns nil when ctx ends.
func (s *Sender) Run(ctx context.Context) error {
	retry := backoff.New(100*time.Millisecond, 5*time.Second)
	defer s.close()
	for ctx.Err() == nil {
		n, err := s.round(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			s.cfg.Logger.Warn("alert sender: postgres", zap.String("error", oneLine(err)), zap.Duration("retry_in", retry.Next()))
			s.close()
			_ = retry.Wait(ctx)
			continue
		}
		retry = backoff.New(100*time.Millisecond, 5*time.Second)
		if n < s.cfg.Batch {
			_ = backoff.Sleep(ctx, s.cfg.Poll)
		}
	}
	return nil
}

func (s *Sender) close() {
	if s.conn != nil {
		_ = s.conn.Close(context.Background())
		s.conn = nil
	}
}

// round delivers up to Batch due alerts, one at a time, and reads the
// pending gauge; it returns how many it posted.
func (s *Sender) round(ctx context.Context) (int, error) {
	if s.conn == nil {
		conn, err := Connect(ctx, s.cfg.Postgres)
		if err != nil {
			return 0, err
		}
		s.conn = conn
	}
	n := 0
	for ; n < s.cfg.Batch; n++ {
		took, err := s.deliverOne(ctx)
		if err != nil {
			return n, err
		}
		if !took {
			break
		}
	}
	if err := s.prune(ctx); err != nil {
		return n, err
	}
	return n, s.countPending(ctx)
}

// pruneEvery is how often done alerts older than Keep are deleted.
const pruneEvery = time.Hour

// prune deletes the alerts delivered or given up more than Keep ago, at
// most once every pruneEvery, so the outbox holds what is pending and
// the last days only.
func (s *Sender) prune(ctx context.Context) error {
	if time.Since(s.pruned) < pruneEvery {
		return nil
	}
	tag, err := s.conn.Exec(ctx, `DELETE FROM alert_outbox
	    WHERE coalesce(delivered_at, failed_at) < now() - make_interval(secs => $1)`, s.cfg.Keep.Seconds())
	if err != nil {
		return fmt.Errorf("prune alerts: %w", err)
	}
	s.pruned = time.Now()
	if n := tag.RowsAffected(); n > 0 {
		s.cfg.Logger.Info("alert sender: pruned done alerts", zap.Int64("alerts", n), zap.Duration("older_than", s.cfg.Keep))
	}
	return nil
}

// takeDue locks the alert due first that no other sender holds.
const takeDue = `SELECT key, webhook, payload, attempts FROM alert_outbox
    WHERE delivered_at IS NULL AND failed_at IS NULL AND next_try <= now()
    ORDER BY next_try LIMIT 1 FOR UPDATE SKIP LOCKED`

// deliverOne takes one due alert, posts it and records how it went, in
// one transaction; false when none is due. Stopped mid-post, it rolls
// back: the alert stays due.
func (s *Sender) deliverOne(ctx context.Context) (bool, error) {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("take a due alert: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var r outboxRow
	err = tx.QueryRow(ctx, takeDue).Scan(&r.key, &r.webhook, &r.payload, &r.attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take a due alert: %w", err)
	}
	status, perr := s.post(ctx, r)
	if ctx.Err() != nil {
		return false, nil
	}
	if err := s.record(ctx, tx, r, status, perr); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("mark alert %s: %w", r.key, err)
	}
	s.counted(r, status, perr)
	return true, nil
}

// post sends one alert; a 2xx answer is a delivery. The error it returns
// has the webhook URL masked.
func (s *Sender) post(ctx context.Context, r outboxRow) (int, error) {
	var a Alert
	if err := json.Unmarshal(r.payload, &a); err != nil {
		return 0, fmt.Errorf("alert %s: payload: %w", r.key, err)
	}
	return Post(ctx, s.cfg.Client, r.webhook, a)
}

// Post sends a (its Text written) to webhook as JSON with a's key as the
// Idempotency-Key header, and returns the answer's status; an error
// (a non-2xx answer is one) names the webhook masked.
func Post(ctx context.Context, c *http.Client, webhook string, a Alert) (int, error) {
	body, _ := json.Marshal(a.withText())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhook, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook %s: %s", mask.URL(webhook), mask.Text(err.Error(), webhook))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", a.Key)
	req.Header.Set("User-Agent", "crawlq-alerts")
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("webhook %s: %s", mask.URL(webhook), mask.Text(err.Error(), webhook))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("webhook %s: answered %s", mask.URL(webhook), resp.Status)
	}
	return resp.StatusCode, nil
}

// record marks r delivered, or failed once more (the next try after the
// backoff, or given up after MaxAttempts).
func (s *Sender) record(ctx context.Context, tx pgx.Tx, r outboxRow, status int, perr error) error {
	if perr == nil {
		_, err := tx.Exec(ctx, `UPDATE alert_outbox SET delivered_at = now(), attempts = attempts + 1,
		    last_status = $2, last_try = now() WHERE key = $1`, r.key, status)
		return err
	}
	n := r.attempts + 1
	_, err := tx.Exec(ctx, `UPDATE alert_outbox SET attempts = $2::int, last_status = $3, last_error = $4, last_try = now(),
	    next_try = now() + make_interval(secs => $5), failed_at = CASE WHEN $2::int >= $6::int THEN now() END WHERE key = $1`,
		r.key, n, status, oneLine(perr), s.retryWait(n).Seconds(), s.cfg.MaxAttempts)
	return err
}

// retryWait is the wait after the n-th failed post of an alert.
func (s *Sender) retryWait(n int) time.Duration {
	return backoff.Delay(s.cfg.RetryFirst, s.cfg.RetryMax, n)
}

// counted tells the metrics and the log how a committed post went.
func (s *Sender) counted(r outboxRow, status int, perr error) {
	if perr == nil {
		s.sent.Add(1)
		s.cfg.Metrics.alertSent()
		return
	}
	n := r.attempts + 1
	s.cfg.Metrics.alertFailed(n >= s.cfg.MaxAttempts)
	s.cfg.Logger.Warn("alert not delivered; retrying", zap.String("key", r.key), zap.Int("attempts", n),
		zap.Int("status", status), zap.String("error", oneLine(perr)), zap.Duration("retry_in", s.retryWait(n)))
}

// countPending sets the pending gauge.
func (s *Sender) countPending(ctx context.Context) error {
	if s.cfg.Metrics == nil {
		return nil
	}
	var n int64
	err := s.conn.QueryRow(ctx, `SELECT count(*) FROM alert_outbox WHERE delivered_at IS NULL AND failed_at IS NULL`).Scan(&n)
	s.cfg.Metrics.alertsPending(n)
	return err
}

// AlertState is how alert delivery goes, for status and the dashboard.
type AlertState struct {
	Rules     int `json:"rules"`
	Pending   int `json:"pending"`
	Failing   int `json:"failing"` // pending alerts whose last post failed
	Delivered int `json:"delivered"`
	GivenUp   int `json:"given_up"`
	// LastError is the newest pending or given-up alert's error, its
	// webhook masked; LastErrorAt when it happened.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// PerRule is each rule's state, by name: which rule fails.
	PerRule []RuleState `json:"per_rule,omitempty"`
}

// RuleState is how one rule's alerts go.
type RuleState struct {
	Rule      string `json:"rule"`
	Site      string `json:"site"`
	Delivered int    `json:"delivered"`
	Pending   int    `json:"pending"`
	Failing   int    `json:"failing"`
	GivenUp   int    `json:"given_up"`
	// LastError is the rule's newest pending or given-up alert's error,
	// its webhook masked; LastErrorAt when it happened.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

// State is the rule's state in a word: "failing" (an alert's last post
// failed), "given up" (an alert was given up), else "ok".
func (r RuleState) State() string {
	switch {
	case r.Failing > 0:
		return "failing"
	case r.GivenUp > 0:
		return "given up"
	}
	return "ok"
}

// ruleStates reads each rule's alert figures, by rule name.
func ruleStates(ctx context.Context, conn Querier) ([]RuleState, error) {
	rows, err := conn.Query(ctx, `SELECT r.name, r.site,
	    count(o.key) FILTER (WHERE o.delivered_at IS NOT NULL),
	    count(o.key) FILTER (WHERE o.delivered_at IS NULL AND o.failed_at IS NULL),
	    count(o.key) FILTER (WHERE o.delivered_at IS NULL AND o.failed_at IS NULL AND o.attempts > 0),
	    count(o.key) FILTER (WHERE o.failed_at IS NOT NULL),
	    (array_agg(o.last_error ORDER BY o.last_try DESC) FILTER (WHERE o.delivered_at IS NULL AND o.last_error IS NOT NULL))[1],
	    max(o.last_try) FILTER (WHERE o.delivered_at IS NULL AND o.last_error IS NOT NULL)
	  FROM alert_rules r LEFT JOIN alert_outbox o ON o.rule = r.name
	  GROUP BY r.name, r.site ORDER BY r.name`)
	if err != nil {
		return nil, fmt.Errorf("alert status per rule: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RuleState, error) {
		var st RuleState
		var last *string
		var at *time.Time
		err := r.Scan(&st.Rule, &st.Site, &st.Delivered, &st.Pending, &st.Failing, &st.GivenUp, &last, &at)
		if last != nil {
			st.LastError = *last
		}
		if at != nil {
			st.LastErrorAt = at.UTC()
		}
		return st, err
	})
}

// AlertStatus reads the alert figures. A database the sink never
// migrated to alerts has none (zero state, no error).
func AlertStatus(ctx context.Context, conn Querier) (AlertState, error) {
	rows, err := conn.Query(ctx, `SELECT (SELECT count(*) FROM alert_rules),
	    count(*) FILTER (WHERE delivered_at IS NULL AND failed_at IS NULL),
	    count(*) FILTER (WHERE delivered_at IS NULL AND failed_at IS NULL AND attempts > 0),
	    count(*) FILTER (WHERE delivered_at IS NOT NULL),
	    count(*) FILTER (WHERE failed_at IS NOT NULL),
	    (SELECT last_error FROM alert_outbox WHERE delivered_at IS NULL AND last_error IS NOT NULL ORDER BY last_try DESC LIMIT 1),
	    (SELECT last_try FROM alert_outbox WHERE delivered_at IS NULL AND last_error IS NOT NULL ORDER BY last_try DESC LIMIT 1)
	  FROM alert_outbox`)
	if err != nil {
		if missingTable(err) {
			return AlertState{}, nil
		}
		return AlertState{}, fmt.Errorf("alert status: %w", err)
	}
	st, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (AlertState, error) {
		var st AlertState
		var last *string
		var at *time.Time
		err := r.Scan(&st.Rules, &st.Pending, &st.Failing, &st.Delivered, &st.GivenUp, &last, &at)
		if last != nil {
			st.LastError = *last
		}
		if at != nil {
			st.LastErrorAt = at.UTC()
		}
		return st, err
	})
	if missingTable(err) {
		return AlertState{}, nil
	}
	if err != nil || st.Rules == 0 {
		return st, err
	}
	st.PerRule, err = ruleStates(ctx, conn)
	return st, err
}

// missingTable reports whether err is PostgreSQL's undefined_table.
func missingTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}
