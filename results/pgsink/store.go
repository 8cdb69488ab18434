package pgsink

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"crawlq/results/item"
)

// Observation is one results stream entry: an item as one job saw it.
type Observation struct {
	// EntryMS, EntrySeq are the stream entry's ID: the row's unique key.
	EntryMS, EntrySeq int64
	Item              item.Item
	// Task is the job's task ID; Schedule the schedule that enqueued it.
	Task, Schedule string
}

// observedAt is when the item was fetched; the entry's time if unknown.
func (o Observation) observedAt() time.Time {
	if !o.Item.FetchedAt.IsZero() {
		return o.Item.FetchedAt
	}
	return time.UnixMilli(o.EntryMS)
}

// Store writes observations into PostgreSQL over one connection.
type Store struct {
	conn *pgx.Conn
}

// Open connects to url, applies the migrations (Migrate) and prepares the
// connection's staging table. An error retrying cannot mend is a
// *PermanentError (or ErrBadURL); every error is on one line.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, ErrBadURL
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = AppName
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, classify(url, err)
	}
	if _, err := Migrate(ctx, conn); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, classify(url, err)
	}
	if _, err := conn.Exec(ctx, stageTable); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, classify(url, fmt.Errorf("create the staging table: %w", err))
	}
	return &Store{conn: conn}, nil
}

// AppName is the sink's application_name in pg_stat_activity.
const AppName = "crawlq-sink"

// Close closes the connection.
func (s *Store) Close() error { return s.conn.Close(context.Background()) }

// Conn is the store's connection (for reads on the same server).
func (s *Store) Conn() *pgx.Conn { return s.conn }

// stageTable holds one batch on its way in; emptied at every commit.
const stageTable = `CREATE TEMP TABLE IF NOT EXISTS sink_stage (
    entry_ms bigint, entry_seq bigint, site text, id text, observed_at timestamptz,
    price bigint, old_price bigint, in_stock boolean, seller text, rating double precision,
    reviews integer, task text, schedule text, title text, currency text, url text
) ON COMMIT DELETE ROWS`

var stageColumns = []string{"entry_ms", "entry_seq", "site", "id", "observed_at", "price", "old_price",
	"in_stock", "seller", "rating", "reviews", "task", "schedule", "title", "currency", "url"}

// mergeBatch moves the staged batch into observations (an entry already
// there adds nothing) and folds the new rows into items, one row per
// (site, id) of the batch, its latest observation winning; it returns the
// observations added.
const mergeBatch = `
WITH ins AS (
    INSERT INTO observations (entry_ms, entry_seq, site, id, observed_at, price, old_price, in_stock,
                              seller, rating, reviews, task, schedule)
    SELECT entry_ms, entry_seq, site, id, observed_at, price, old_price, in_stock,
           seller, rating, reviews, task, schedule
    FROM sink_stage
    ON CONFLICT DO NOTHING
    RETURNING entry_ms, entry_seq
), latest AS (
    SELECT DISTINCT ON (s.site, s.id) s.*, min(s.observed_at) OVER (PARTITION BY s.site, s.id) AS first_seen
    FROM sink_stage s JOIN ins USING (entry_ms, entry_seq)
    ORDER BY s.site, s.id, s.observed_at DESC, s.entry_ms DESC, s.entry_seq DESC
), up AS (
    INSERT INTO items AS i (site, id, title, price, old_price, currency, seller, rating, reviews, in_stock,
                            url, first_seen, last_seen)
    SELECT site, id, coalesce(title, ''), price, old_price, coalesce(currency, ''), seller, rating, reviews,
           in_stock, coalesce(url, ''), first_seen, observed_at
    FROM latest ORDER BY site, id
    ON CONFLICT (site, id) DO UPDATE SET
        title     = CASE WHEN excluded.last_seen >= i.last_seen AND excluded.title <> '' THEN excluded.title ELSE i.title END,
        price     = CASE WHEN excluded.last_seen >= i.last_seen THEN coalesce(excluded.price, i.price) ELSE coalesce(i.price, excluded.price) END,
        old_price = CASE WHEN excluded.last_seen >= i.last_seen THEN excluded.old_price ELSE i.old_price END,
        currency  = CASE WHEN excluded.currency <> '' AND excluded.last_seen >= i.last_seen THEN excluded.currency ELSE i.currency END,
        seller    = CASE WHEN excluded.last_seen >= i.last_seen THEN coalesce(excluded.seller, i.seller) ELSE coalesce(i.seller, excluded.seller) END,
        rating    = CASE WHEN excluded.last_seen >= i.last_seen THEN coalesce(excluded.rating, i.rating) ELSE coalesce(i.rating, excluded.rating) END,
        reviews   = CASE WHEN excluded.last_seen >= i.last_seen THEN coalesce(excluded.reviews, i.reviews) ELSE coalesce(i.reviews, excluded.reviews) END,
        in_stock  = CASE WHEN excluded.last_seen >= i.last_seen THEN coalesce(excluded.in_stock, i.in_stock) ELSE coalesce(i.in_stock, excluded.in_stock) END,
        url       = CASE WHEN excluded.url <> '' AND excluded.last_seen >= i.last_seen THEN excluded.url ELSE i.url END,
        first_seen = least(i.first_seen, excluded.first_seen),
        last_seen  = greatest(i.last_seen, excluded.last_seen)
)
SELECT count(*) FROM ins`

// Write commits a batch in one transaction: the observations (COPY into
// the staging table, then one statement, mergeBatch), the alerts they
// fire (decideAlerts, into the outbox) and the entries rejected
// (insertRejected). It returns the observations added (an entry
// written before adds none).
func (s *Store) Write(ctx context.Context, obs []Observation, rejected []Rejection) (int, error) {
	var added int
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		var err error
		if len(obs) > 0 {
			added, err = writeObservations(ctx, tx, obs)
		}
		if err == nil && len(rejected) > 0 {
			ids, fields, reasons := rejectedArgs(rejected)
			_, err = tx.Exec(ctx, insertRejected, ids, fields, reasons)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("write %d observations and %d rejected entries: %w", len(obs), len(rejected), err)
	}
	return added, nil
}

func writeObservations(ctx context.Context, tx pgx.Tx, obs []Observation) (int, error) {
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"sink_stage"}, stageColumns, pgx.CopyFromSlice(len(obs), func(i int) ([]any, error) {
		return row(obs[i]), nil
	}))
	if err != nil {
		return 0, fmt.Errorf("copy: %w", err)
	}
	var added int
	if err = tx.QueryRow(ctx, mergeBatch).Scan(&added); err != nil {
		return 0, err
	}
	if _, err = tx.Exec(ctx, decideAlerts); err != nil {
		return 0, fmt.Errorf("decide alerts: %w", err)
	}
	return added, nil
}

func row(o Observation) []any {
	it := o.Item
	return []any{o.EntryMS, o.EntrySeq, it.Site, it.ID, o.observedAt(), nz(it.Price), nz(it.OldPrice),
		it.InStock, ns(it.Seller), nzf(it.Rating), nzi(it.Reviews), o.Task, ns(o.Schedule), it.Title, it.Currency, it.URL}
}

// nz and friends turn an unknown (zero) field into NULL.
func nz(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func nzi(v int) *int32 {
	if v == 0 {
		return nil
	}
	n := int32(v)
	return &n
}

func nzf(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

func ns(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
