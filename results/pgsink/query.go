package pgsink

import (
	"crawlq/internal/mask"

	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"crawlq/results"
	"crawlq/results/item"
)

// Connect opens a connection for reading (export, prices, changes); it
// does not migrate.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, ErrBadURL
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", mask.URL(url), flat{err}) // one line
	}
	return conn, nil
}

// OpenPool opens a pool of connections for reading (the dashboard); it
// does not migrate.
func OpenPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, ErrBadURL
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", mask.URL(url), err)
	}
	return pool, nil
}

// Querier is a connection or a pool (pgxpool.Pool) to read with.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// ExportOptions select what Export writes.
type ExportOptions struct {
	results.ExportOptions
	// Since keeps items last seen (with All: observed) at or after it.
	Since time.Time
}

// Export writes the stored items (latest state per (site, id); with All,
// every observation) to w in the format asked, and returns how many.
func Export(ctx context.Context, conn Querier, w io.Writer, o ExportOptions) (int, error) {
	q := `SELECT site, id, title, coalesce(price, 0), coalesce(old_price, 0), currency, coalesce(seller, ''),
	             coalesce(rating, 0), coalesce(reviews, 0), in_stock, url, last_seen
	      FROM items WHERE ($1 = '' OR site = $1) AND last_seen >= $2 ORDER BY site, id`
	if o.All {
		q = `SELECT o.site, o.id, i.title, coalesce(o.price, 0), coalesce(o.old_price, 0), i.currency,
		            coalesce(o.seller, ''), coalesce(o.rating, 0), coalesce(o.reviews, 0), o.in_stock, i.url, o.observed_at
		     FROM observations o JOIN items i USING (site, id)
		     WHERE ($1 = '' OR o.site = $1) AND o.observed_at >= $2 ORDER BY o.observed_at, o.entry_ms, o.entry_seq`
	}
	rows, err := conn.Query(ctx, q, o.Site, o.Since)
	if err != nil {
		return 0, fmt.Errorf("export: %w", SchemaHint(err))
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (item.Item, error) {
		var it item.Item
		err := r.Scan(&it.Site, &it.ID, &it.Title, &it.Price, &it.OldPrice, &it.Currency, &it.Seller,
			&it.Rating, &it.Reviews, &it.InStock, &it.URL, &it.FetchedAt)
		it.FetchedAt = it.FetchedAt.UTC()
		return it, err
	})
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	return len(items), results.Write(w, o.Format, items)
}

// PricePoint is one observation of an item's price.
type PricePoint struct {
	At       time.Time `json:"at"`
	Price    int64     `json:"price"`
	OldPrice int64     `json:"old_price,omitempty"`
	InStock  *bool     `json:"in_stock,omitempty"`
	Seller   string    `json:"seller,omitempty"`
	Task     string    `json:"task"`
	Schedule string    `json:"schedule,omitempty"`
}

// Prices is an item's price history, oldest first.
func Prices(ctx context.Context, conn Querier, site, id string) ([]PricePoint, error) {
	rows, err := conn.Query(ctx, `SELECT observed_at, coalesce(price, 0), coalesce(old_price, 0), in_stock,
	        coalesce(seller, ''), task, coalesce(schedule, '')
	    FROM observations WHERE site = $1 AND id = $2 ORDER BY observed_at, entry_ms, entry_seq`, site, id)
	if err != nil {
		return nil, fmt.Errorf("prices of %s %s: %w", site, id, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (PricePoint, error) {
		var p PricePoint
		err := r.Scan(&p.At, &p.Price, &p.OldPrice, &p.InStock, &p.Seller, &p.Task, &p.Schedule)
		p.At = p.At.UTC()
		return p, err
	})
}

// Sites lists the sites the store has items of, sorted. It walks the
// items' primary key one site at a time (a loose index scan), so it costs
// one index probe per site, not a scan of the items.
func Sites(ctx context.Context, conn Querier) ([]string, error) {
	rows, err := conn.Query(ctx, `
	    WITH RECURSIVE s AS (
	        (SELECT site FROM items ORDER BY site LIMIT 1)
	        UNION ALL
	        SELECT (SELECT i.site FROM items i WHERE i.site > s.site ORDER BY i.site LIMIT 1) FROM s WHERE s.site IS NOT NULL)
	    SELECT site FROM s WHERE site IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("sites: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Change is one price change of an item: From before, To at At.
type Change struct {
	Site  string    `json:"site"`
	ID    string    `json:"id"`
	Title string    `json:"title"`
	At    time.Time `json:"at"`
	From  int64     `json:"from"`
	To    int64     `json:"to"`
	// ChangePct is the change From → To in percent of From, two
	// decimals, negative for a fall (ChangePct).
	ChangePct float64 `json:"change_pct"`
}

// Changes lists the price changes observed at or after since, newest
// first, each against the item's previous known price (which may be older
// than since); minDrop > 0 keeps only falls of at least that many percent.
// limit > 0 caps the list.
func Changes(ctx context.Context, conn Querier, since time.Time, minDrop float64, limit int) ([]Change, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := conn.Query(ctx, `
	    WITH touched AS (SELECT DISTINCT site, id FROM observations WHERE observed_at >= $1),
	    seq AS (
	        SELECT o.site, o.id, o.observed_at, o.price,
	               lag(o.price) OVER (PARTITION BY o.site, o.id ORDER BY o.observed_at, o.entry_ms, o.entry_seq) AS prev
	        FROM observations o JOIN touched USING (site, id) WHERE o.price IS NOT NULL)
	    SELECT s.site, s.id, coalesce(i.title, ''), s.observed_at, s.prev, s.price
	    FROM seq s LEFT JOIN items i USING (site, id)
	    WHERE s.observed_at >= $1 AND s.prev IS NOT NULL AND s.prev <> s.price
	      AND ($2 <= 0 OR 100.0 * (s.prev - s.price) / s.prev >= $2)
	    ORDER BY s.observed_at DESC, s.site, s.id LIMIT $3`, since, minDrop, limit)
	if err != nil {
		return nil, fmt.Errorf("price changes: %w", SchemaHint(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Change, error) {
		var c Change
		err := r.Scan(&c.Site, &c.ID, &c.Title, &c.At, &c.From, &c.To)
		c.At, c.ChangePct = c.At.UTC(), ChangePct(c.From, c.To)
		return c, err
	})
}
