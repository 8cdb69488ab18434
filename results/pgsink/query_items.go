package pgsink

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"crawlq/results/item"
)

// ErrNoTables is a database without the sink's tables: nothing has
// migrated it yet.
var ErrNoTables = errors.New("the database has no crawlq tables: run `crawlq sink --postgres URL` once (it creates them), or point --postgres at the sink's database")

// ErrNoItem is an item the store has never seen.
var ErrNoItem = errors.New("no such item")

// undefinedTable is PostgreSQL's SQLSTATE for a relation that does not exist.
const undefinedTable = "42P01"

// SchemaHint turns a "relation does not exist" error into ErrNoTables
// (with the query's context kept); other errors are returned as they are.
func SchemaHint(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == undefinedTable {
		return fmt.Errorf("%w (%s)", ErrNoTables, pg.Message)
	}
	return err
}

// StoredItem is an item's latest state in the store: the item as last
// seen (FetchedAt is LastSeen; Price and OldPrice 0 when unknown) and
// when it was first and last seen.
type StoredItem struct {
	item.Item
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// itemColumns are StoredItem's columns of the items table, in scanItem's order.
const itemColumns = `site, id, title, coalesce(price, 0), coalesce(old_price, 0), currency, coalesce(seller, ''),
	coalesce(rating, 0), coalesce(reviews, 0), in_stock, url, first_seen, last_seen`

// dest is where itemColumns scan to.
func (it *StoredItem) dest() []any {
	return []any{&it.Site, &it.ID, &it.Title, &it.Price, &it.OldPrice, &it.Currency, &it.Seller,
		&it.Rating, &it.Reviews, &it.InStock, &it.URL, &it.FirstSeen, &it.LastSeen}
}

func scanItem(r pgx.CollectableRow) (StoredItem, error) {
	var it StoredItem
	err := r.Scan(it.dest()...)
	it.FirstSeen, it.LastSeen = it.FirstSeen.UTC(), it.LastSeen.UTC()
	it.FetchedAt = it.LastSeen
	return it, err
}

// MaxSearch bounds SearchItems' answer whatever limit is asked.
const MaxSearch = 200

// SearchItems finds items of site (every site when empty) whose id is q
// exactly, then items whose title holds every word of q (case-insensitive),
// by site and id, at most limit (1 to MaxSearch) in all. The id match is a
// primary-key probe per site; no index serves the title words, so that
// part reads the sites' items until it has limit matches.
func SearchItems(ctx context.Context, conn Querier, site, q string, limit int) ([]StoredItem, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, nil
	}
	limit = min(max(limit, 1), MaxSearch)
	sites := []string{site}
	if site == "" {
		var err error
		if sites, err = Sites(ctx, conn); err != nil {
			return nil, SchemaHint(err)
		}
	}
	rows, err := conn.Query(ctx, `
	    (SELECT `+itemColumns+`, 0 AS rank FROM items WHERE site = ANY($1) AND id = $2)
	    UNION ALL
	    (SELECT `+itemColumns+`, 1 FROM items
	     WHERE site = ANY($1) AND id <> $2 AND title ILIKE ALL($3)
	     ORDER BY site, id LIMIT $4)
	    ORDER BY rank, site, id LIMIT $4`, sites, q, likePatterns(q), limit)
	if err != nil {
		return nil, fmt.Errorf("search items of %q for %q: %w", site, q, SchemaHint(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (StoredItem, error) {
		var rank int
		var it StoredItem
		err := r.Scan(append(it.dest(), &rank)...)
		it.FirstSeen, it.LastSeen = it.FirstSeen.UTC(), it.LastSeen.UTC()
		return it, err
	})
}

// likePatterns are ILIKE patterns matching each word of q anywhere, its
// %, _ and \ taken literally.
func likePatterns(q string) []string {
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	var out []string
	for _, w := range strings.Fields(q) {
		out = append(out, "%"+esc.Replace(w)+"%")
	}
	return out
}

// Item is the latest state of one item, or ErrNoItem.
func Item(ctx context.Context, conn Querier, site, id string) (StoredItem, error) {
	rows, err := conn.Query(ctx, `SELECT `+itemColumns+` FROM items WHERE site = $1 AND id = $2`, site, id)
	if err != nil {
		return StoredItem{}, fmt.Errorf("item %s %s: %w", site, id, SchemaHint(err))
	}
	it, err := pgx.CollectExactlyOneRow(rows, scanItem)
	if errors.Is(err, pgx.ErrNoRows) {
		return StoredItem{}, fmt.Errorf("item %s %s: %w", site, id, ErrNoItem)
	}
	return it, err
}

// RecentPrices is an item's newest limit observations, newest first, and
// how many it has in all.
func RecentPrices(ctx context.Context, conn Querier, site, id string, limit int) ([]PricePoint, int, error) {
	rows, err := conn.Query(ctx, `SELECT observed_at, coalesce(price, 0), coalesce(old_price, 0), in_stock,
	        coalesce(seller, ''), task, coalesce(schedule, ''), count(*) OVER ()
	    FROM observations WHERE site = $1 AND id = $2
	    ORDER BY observed_at DESC, entry_ms DESC, entry_seq DESC LIMIT $3`, site, id, max(limit, 1))
	if err != nil {
		return nil, 0, fmt.Errorf("prices of %s %s: %w", site, id, SchemaHint(err))
	}
	var total int
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PricePoint, error) {
		var p PricePoint
		err := r.Scan(&p.At, &p.Price, &p.OldPrice, &p.InStock, &p.Seller, &p.Task, &p.Schedule, &total)
		p.At = p.At.UTC()
		return p, err
	})
	return ps, total, err
}

// PriceSteps is an item's price history reduced to its steps, oldest
// first: the first observation, each one whose price, old price or stock
// differs from the one before, and the last (where the line ends). Of a
// history with more steps than limit, the newest limit are kept.
func PriceSteps(ctx context.Context, conn Querier, site, id string, limit int) ([]PricePoint, error) {
	rows, err := conn.Query(ctx, `
	    SELECT observed_at, price, old_price, in_stock, seller, task, schedule FROM (
	        SELECT observed_at, coalesce(price, 0) AS price, coalesce(old_price, 0) AS old_price, in_stock,
	               coalesce(seller, '') AS seller, task, coalesce(schedule, '') AS schedule, entry_ms, entry_seq,
	               row_number() OVER w AS n, lead(observed_at) OVER w AS next,
	               lag(price) OVER w AS p0, lag(old_price) OVER w AS o0, lag(in_stock) OVER w AS s0,
	               price AS p1, old_price AS o1
	        FROM observations WHERE site = $1 AND id = $2
	        WINDOW w AS (ORDER BY observed_at, entry_ms, entry_seq)) s
	    WHERE n = 1 OR next IS NULL OR p0 IS DISTINCT FROM p1 OR o0 IS DISTINCT FROM o1 OR s0 IS DISTINCT FROM in_stock
	    ORDER BY observed_at DESC, entry_ms DESC, entry_seq DESC LIMIT $3`, site, id, max(limit, 2))
	if err != nil {
		return nil, fmt.Errorf("price steps of %s %s: %w", site, id, SchemaHint(err))
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PricePoint, error) {
		var p PricePoint
		err := r.Scan(&p.At, &p.Price, &p.OldPrice, &p.InStock, &p.Seller, &p.Task, &p.Schedule)
		p.At = p.At.UTC()
		return p, err
	})
	slices.Reverse(ps)
	return ps, err
}

// PricesCSVHeader names the columns of WritePricesCSV: prices in kopecks
// (as `results export`), an unknown price, old price or stock an empty cell.
var PricesCSVHeader = []string{"site", "id", "observed_at", "price", "old_price", "in_stock", "seller", "schedule", "task"}

// WritePricesCSV writes an item's price history (Prices) as CSV with a
// header line: the download of its dashboard page and `crawlq prices
// --format csv`.
func WritePricesCSV(w io.Writer, site, id string, ps []PricePoint) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(PricesCSVHeader)
	for _, p := range ps {
		_ = cw.Write([]string{site, id, p.At.UTC().Format(time.RFC3339), blankZero(p.Price), blankZero(p.OldPrice),
			stockCell(p.InStock), p.Seller, p.Schedule, p.Task})
	}
	cw.Flush()
	return cw.Error()
}

func blankZero(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

func stockCell(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}
