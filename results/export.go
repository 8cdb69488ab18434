package results

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/results/item"
)

// Format of an export.
type Format string

// Export formats.
const (
	JSONL Format = "jsonl"
	CSV   Format = "csv"
)

// ErrUnknownFormat is an export format other than jsonl and csv.
var ErrUnknownFormat = errors.New("want jsonl or csv")

// ParseFormat reads a format name: jsonl or csv, else ErrUnknownFormat.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case JSONL, CSV:
		return f, nil
	}
	return "", fmt.Errorf("format %q: %w", s, ErrUnknownFormat)
}

// ExportOptions select what Export writes.
type ExportOptions struct {
	// Site keeps only this site's items; empty keeps all.
	Site string
	// Format is jsonl (default) or csv.
	Format Format
	// All keeps every record; by default one item per (site, id), later
	// records (a product page after its search card) filling in fields.
	All bool
}

// Export writes the stream's items to w and returns how many it wrote.
func Export(ctx context.Context, rdb redis.UniversalClient, w io.Writer, o ExportOptions) (int, error) {
	items, err := Read(ctx, rdb, o.Site)
	if err != nil {
		return 0, err
	}
	if !o.All {
		items = Merge(items)
	}
	return len(items), Write(w, o.Format, items)
}

// Write writes items to w in format f (jsonl unless csv).
func Write(w io.Writer, f Format, items []item.Item) error {
	if f == CSV {
		return writeCSV(w, items)
	}
	return writeJSONL(w, items)
}

// Read returns every item in the stream, oldest first, of site (or all).
func Read(ctx context.Context, rdb redis.UniversalClient, site string) ([]item.Item, error) {
	var out []item.Item
	start := "-"
	for {
		msgs, err := rdb.XRangeN(ctx, StreamKey, start, "+", 1000).Result()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", StreamKey, err)
		}
		for _, m := range msgs {
			if it, ok := decode(m); ok && (site == "" || it.Site == site) {
				out = append(out, it)
			}
		}
		if len(msgs) < 1000 {
			return out, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

func decode(m redis.XMessage) (item.Item, bool) {
	raw, _ := m.Values["item"].(string)
	var it item.Item
	return it, json.Unmarshal([]byte(raw), &it) == nil
}

// Merge keeps one item per (site, id) in first-seen order; fields that a
// later record has set override the earlier ones.
func Merge(items []item.Item) []item.Item {
	idx := map[string]int{}
	var out []item.Item
	for _, it := range items {
		k := it.Site + "\x00" + it.ID
		if i, ok := idx[k]; ok {
			out[i] = fill(out[i], it)
			continue
		}
		idx[k] = len(out)
		out = append(out, it)
	}
	return out
}

func fill(a, b item.Item) item.Item {
	setS(&a.Title, b.Title)
	setS(&a.Currency, b.Currency)
	setS(&a.Seller, b.Seller)
	setS(&a.URL, b.URL)
	if b.Price != 0 {
		a.Price = b.Price
	}
	if b.OldPrice != 0 {
		a.OldPrice = b.OldPrice
	}
	if b.Rating != 0 {
		a.Rating = b.Rating
	}
	if b.Reviews != 0 {
		a.Reviews = b.Reviews
	}
	if b.InStock != nil {
		a.InStock = b.InStock
	}
	if b.FetchedAt.After(a.FetchedAt) {
		a.FetchedAt = b.FetchedAt
	}
	return a
}

func setS(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func writeJSONL(w io.Writer, items []item.Item) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}

// csvHeader names the CSV columns, in the order of the items table;
// prices are kopecks, an unknown old price or stock an empty cell (never
// 0 or false).
var csvHeader = []string{"site", "id", "title", "price", "old_price", "currency", "seller", "rating", "reviews", "in_stock", "url", "fetched_at"}

func writeCSV(w io.Writer, items []item.Item) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	for _, it := range items {
		_ = cw.Write([]string{it.Site, it.ID, it.Title, i64(it.Price), optional(it.OldPrice), it.Currency,
			it.Seller, strconv.FormatFloat(it.Rating, 'f', -1, 64), strconv.Itoa(it.Reviews), optionalBool(it.InStock), it.URL,
			it.FetchedAt.UTC().Format(time.RFC3339)})
	}
	cw.Flush()
	return cw.Error()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// optional writes an unknown (zero) value as an empty cell.
func optional(v int64) string {
	if v == 0 {
		return ""
	}
	return i64(v)
}

// optionalBool writes an unknown (nil) value as an empty cell.
func optionalBool(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}

// Tail writes items as JSON lines as they arrive, until ctx ends.
func Tail(ctx context.Context, rdb redis.UniversalClient, w io.Writer, site string) error {
	last := "$"
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for ctx.Err() == nil {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{StreamKey, last}, Block: time.Second, Count: 100}).Result()
		if err != nil && err != redis.Nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("tail %s: %w", StreamKey, err)
		}
		for _, s := range res {
			for _, m := range s.Messages {
				last = m.ID
				if it, ok := decode(m); ok && (site == "" || it.Site == site) {
					_ = enc.Encode(it)
				}
			}
		}
	}
	return nil
}
