package pgsink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Rule is one alert rule: which items, what change, whom to tell.
type Rule struct {
	Name string `json:"name"`
	Site string `json:"site"`
	// IDs, Query and Schedule name the rule's items: these ids, the items
	// whose title holds every word of Query, the items Schedule observes;
	// with none, every item of Site.
	IDs      []string `json:"ids,omitempty"`
	Query    string   `json:"query,omitempty"`
	Schedule string   `json:"schedule,omitempty"`
	// DropPct > 0 fires on a fall of at least that many percent.
	DropPct float64 `json:"drop_pct,omitempty"`
	// Below > 0 fires when the price falls to Below kopecks or under from
	// above it.
	Below int64 `json:"below,omitempty"`
	// BackInStock fires when an item out of stock is in stock again.
	BackInStock bool `json:"back_in_stock,omitempty"`
	// Webhook is the URL the alerts are posted to (it may hold a secret:
	// print it with mask.URL).
	Webhook   string    `json:"webhook"`
	CreatedAt time.Time `json:"created_at"`
}

// Errors of the rule commands.
var (
	ErrRuleExists = errors.New("alert rule exists")
	ErrNoRule     = errors.New("no such alert rule")
)

// Check says what is wrong with r, naming the field, or nil.
func (r Rule) Check() error {
	switch {
	case r.Name == "" || strings.ContainsAny(r.Name, ": \t\n"):
		return fmt.Errorf("alert name %q: want a non-empty name without spaces or ':'", r.Name)
	case r.Site == "":
		return errors.New("site: required")
	case r.DropPct < 0 || r.DropPct >= 100 || math.IsNaN(r.DropPct):
		return fmt.Errorf("drop-pct %v: want a percent in (0, 100)", r.DropPct)
	case r.Below < 0:
		return fmt.Errorf("below %d: want a positive price", r.Below)
	case r.DropPct > 0 && r.Below > 0:
		return errors.New("drop-pct and below: give one of them")
	case r.DropPct == 0 && r.Below == 0 && !r.BackInStock:
		return errors.New("no condition: give drop-pct, below or back-in-stock")
	case len(r.IDs) > 0 && (r.Query != "" || r.Schedule != ""):
		return errors.New("ids and query/schedule: give one way to name the items")
	}
	return checkWebhook(r.Webhook)
}

// Migrated is conn after Migrate: the alert commands run on it.
func Migrated(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	if _, err := Migrate(ctx, conn); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, classify(url, err)
	}
	return conn, nil
}

// AddRule stores r (ErrRuleExists when its name is taken).
func AddRule(ctx context.Context, conn *pgx.Conn, r Rule) error {
	if err := r.Check(); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO alert_rules (name, site, by_ids, query_words, schedule, drop_pct, below, back_in_stock, webhook)
		    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, r.Name, r.Site, len(r.IDs) > 0, queryWords(r.Query),
			ns(r.Schedule), nzf(r.DropPct), nz(r.Below), r.BackInStock, r.Webhook)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return fmt.Errorf("%w: %s", ErrRuleExists, r.Name)
		}
		if err != nil {
			return fmt.Errorf("add alert %s: %w", r.Name, err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO alert_rule_items (site, id, rule) SELECT $1, unnest($2::text[]), $3
		    ON CONFLICT DO NOTHING`, r.Site, r.IDs, r.Name)
		return err
	})
}

// queryWords are q's words, lower-cased; nil for none.
func queryWords(q string) []string {
	if f := strings.Fields(strings.ToLower(q)); len(f) > 0 {
		return f
	}
	return nil
}

// Rules lists the alert rules by name.
func Rules(ctx context.Context, conn Querier) ([]Rule, error) {
	rows, err := conn.Query(ctx, `SELECT r.name, r.site, coalesce(array_to_string(r.query_words, ' '), ''),
	        coalesce(r.schedule, ''), coalesce(r.drop_pct, 0), coalesce(r.below, 0), r.back_in_stock, r.webhook, r.created_at,
	        coalesce((SELECT array_agg(i.id ORDER BY i.id) FROM alert_rule_items i WHERE i.rule = r.name), '{}')
	    FROM alert_rules r ORDER BY r.name`)
	if err != nil {
		return nil, fmt.Errorf("alert rules: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Rule, error) {
		var r Rule
		err := row.Scan(&r.Name, &r.Site, &r.Query, &r.Schedule, &r.DropPct, &r.Below, &r.BackInStock, &r.Webhook,
			&r.CreatedAt, &r.IDs)
		r.CreatedAt = r.CreatedAt.UTC()
		return r, err
	})
}

// GetRule is the rule named name, or ErrNoRule.
func GetRule(ctx context.Context, conn Querier, name string) (Rule, error) {
	rs, err := Rules(ctx, conn)
	if err != nil {
		return Rule{}, err
	}
	for _, r := range rs {
		if r.Name == name {
			return r, nil
		}
	}
	return Rule{}, fmt.Errorf("%w: %s", ErrNoRule, name)
}

// RemoveRule deletes the rule named name and its undelivered alerts, or
// says ErrNoRule.
func RemoveRule(ctx context.Context, conn *pgx.Conn, name string) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM alert_rules WHERE name = $1`, name)
		if err != nil {
			return fmt.Errorf("remove alert %s: %w", name, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: %s", ErrNoRule, name)
		}
		_, err = tx.Exec(ctx, `DELETE FROM alert_outbox WHERE rule = $1 AND delivered_at IS NULL`, name)
		return err
	})
}

// decideAlerts puts in the outbox an alert for every staged observation
// that a rule matches: the item is the rule's, and against the item's
// previous priced observation (the batch's own rows included, as
// mergeBatch wrote them) the price fell by drop_pct or more, fell to
// below or under from above it, or the item came back in stock. The key
// is rule:site:id:entry, so a redelivered entry adds nothing. It runs in
// the transaction that writes the observations.
const decideAlerts = `
WITH matched AS (
    SELECT s.*, r.name AS rule, r.drop_pct, r.below, r.back_in_stock, r.webhook
    FROM sink_stage s JOIN alert_rule_items ri ON ri.site = s.site AND ri.id = s.id
    JOIN alert_rules r ON r.name = ri.rule
    UNION ALL
    SELECT s.*, r.name, r.drop_pct, r.below, r.back_in_stock, r.webhook
    FROM sink_stage s JOIN alert_rules r ON r.site = s.site AND NOT r.by_ids
    WHERE (r.schedule IS NULL OR r.schedule = s.schedule)
      AND (r.query_words IS NULL OR NOT EXISTS (
          SELECT 1 FROM unnest(r.query_words) w WHERE strpos(lower(s.title), w) = 0))
), fired AS (
    SELECT m.*, p.price AS prev_price, p.in_stock AS prev_in_stock
    FROM matched m CROSS JOIN LATERAL (
        SELECT o.price, o.in_stock FROM observations o
        WHERE o.site = m.site AND o.id = m.id AND o.price IS NOT NULL
          AND (o.observed_at, o.entry_ms, o.entry_seq) < (m.observed_at, m.entry_ms, m.entry_seq)
        ORDER BY o.observed_at DESC, o.entry_ms DESC, o.entry_seq DESC LIMIT 1) p
    WHERE m.price IS NOT NULL AND (
        (m.drop_pct IS NOT NULL AND m.price < p.price AND 100.0 * (p.price - m.price) / p.price >= m.drop_pct)
     OR (m.below IS NOT NULL AND m.price <= m.below AND p.price > m.below)
     OR (m.back_in_stock AND p.in_stock = false AND m.in_stock = true))
)
INSERT INTO alert_outbox (key, rule, site, id, webhook, payload)
SELECT f.rule || ':' || f.site || ':' || f.id || ':' || f.entry_ms || '-' || f.entry_seq, f.rule, f.site, f.id, f.webhook,
       jsonb_build_object('rule', f.rule, 'site', f.site, 'id', f.id, 'title', coalesce(f.title, ''),
           'url', coalesce(f.url, ''), 'currency', coalesce(f.currency, ''), 'old_price', f.prev_price,
           'new_price', f.price,
           'in_stock', f.in_stock, 'was_in_stock', f.prev_in_stock, 'observed_at', f.observed_at,
           'key', f.rule || ':' || f.site || ':' || f.id || ':' || f.entry_ms || '-' || f.entry_seq)
FROM fired f
ON CONFLICT (key) DO NOTHING`

// Alert is the JSON body a webhook receives (see docs/alerts.md).
type Alert struct {
	Rule  string `json:"rule"`
	Site  string `json:"site"`
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
	// Currency is the item's ("RUB"); prices are in its minor unit
	// (kopecks), as everywhere in crawlq.
	Currency string `json:"currency"`
	OldPrice int64  `json:"old_price"`
	NewPrice int64  `json:"new_price"`
	// ChangePct is the change OldPrice → NewPrice in percent of
	// OldPrice, two decimals, negative for a fall (ChangePct); the sender
	// computes it.
	ChangePct  float64   `json:"change_pct"`
	InStock    *bool     `json:"in_stock"`
	WasInStock *bool     `json:"was_in_stock"`
	ObservedAt time.Time `json:"observed_at"`
	// Key is the alert's idempotency key (also the Idempotency-Key
	// header): one change, one key, however often it is posted.
	Key string `json:"key"`
	// Text is a human line, ready for a Telegram sendMessage.
	Text string `json:"text"`
	// Test is true in `crawlq alert test`'s payload.
	Test bool `json:"test,omitempty"`
}

// withText is a with its ChangePct and Text written.
func (a Alert) withText() Alert {
	a.ChangePct = ChangePct(a.OldPrice, a.NewPrice)
	title := a.Title
	if title == "" {
		title = a.Site + " " + a.ID
	}
	var what string
	switch {
	case a.InStock != nil && *a.InStock && a.WasInStock != nil && !*a.WasInStock && a.NewPrice >= a.OldPrice:
		what = "back in stock at " + money(a.NewPrice, a.Currency)
	case a.NewPrice < a.OldPrice:
		what = fmt.Sprintf("%s → %s (%s)", money(a.OldPrice, a.Currency), money(a.NewPrice, a.Currency),
			FormatChange(a.ChangePct))
	default:
		what = money(a.OldPrice, a.Currency) + " → " + money(a.NewPrice, a.Currency)
	}
	a.Text = strings.TrimSpace(fmt.Sprintf("%s: %s: %s %s", a.Rule, title, what, a.URL))
	return a
}

// money is kopecks as "1 999 ₽" (whole rubles) or "1 999.50 ₽".
func money(k int64, currency string) string {
	unit := "₽"
	if currency != "" && currency != "RUB" {
		unit = currency
	}
	s := strconv.FormatInt(k/100, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	if c := k % 100; c != 0 {
		fmt.Fprintf(&b, ".%02d", c)
	}
	return b.String() + " " + unit
}
