package bench

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
)

// SinkOptions configure RunSink.
type SinkOptions struct {
	// Rows is how many observations the stream holds when the sink starts.
	// Default 200,000.
	Rows int
	// Batch is the sink's batch size. Default the sink's (5000).
	Batch int
	// Items is the number of distinct items the observations are of (each
	// seen Rows/Items times). Default Rows/4.
	Items int
	// Alerts is how many alert rules are installed before the run (each
	// watching AlertItems items by id for a 1% drop or a return to
	// stock), so the sink decides alerts in every batch. Default none.
	Alerts int
}

// AlertItems is how many items each bench alert rule watches.
const AlertItems = 20

// SinkResult is one bench sink run.
type SinkResult struct {
	Rows  int `json:"rows"`
	Items int `json:"items"`
	Batch int `json:"batch"`
	// Alerts is the rules installed; Fired the alerts the sink decided.
	Alerts   int     `json:"alerts"`
	Fired    int     `json:"fired"`
	Seconds  float64 `json:"seconds"`
	RowsPerS float64 `json:"rows_per_s"`
	// Load is the machine's 1-minute load average when the run ended.
	Load string `json:"load"`
}

// RunSink fills the results stream of rdb (which must have none) with
// o.Rows entries, as pages write them, then times one sink draining them
// into a scratch database created on the server of pgURL (dropped after).
// The stream and the sink's marks are removed after the run.
func RunSink(ctx context.Context, rdb redis.UniversalClient, pgURL string, o SinkOptions) (*SinkResult, error) {
	o = o.withDefaults()
	if n, err := rdb.Exists(ctx, results.StreamKey, results.SinkMarkerKey).Result(); err != nil || n > 0 {
		return nil, fmt.Errorf("bench sink needs a Redis DB without a results stream or sink (found %d of them, %v): give --redis a spare DB, e.g. redis://host:6379/9", n, err)
	}
	defer cleanSink(rdb)
	url, drop, err := scratchDB(ctx, pgURL)
	if err != nil {
		return nil, err
	}
	defer drop()
	if err := fill(ctx, rdb, o); err != nil {
		return nil, err
	}
	st, err := pgsink.Open(ctx, url) // the migrations, before the clock runs
	if err != nil {
		return nil, err
	}
	_ = st.Close()
	if err := addAlertRules(ctx, url, o); err != nil {
		return nil, err
	}
	took, err := drain(ctx, rdb, url, o)
	if err != nil {
		return nil, err
	}
	fired, err := countAlerts(ctx, url)
	if err != nil {
		return nil, err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	return &SinkResult{Rows: o.Rows, Items: o.Items, Batch: o.Batch, Alerts: o.Alerts, Fired: fired, Seconds: took.Seconds(),
		RowsPerS: float64(o.Rows) / took.Seconds(), Load: strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " ")}, nil
}

func (o SinkOptions) withDefaults() SinkOptions {
	if o.Rows <= 0 {
		o.Rows = 200_000
	}
	if o.Batch <= 0 {
		o.Batch = 5000
	}
	if o.Items <= 0 {
		o.Items = max(1, o.Rows/4)
	}
	return o
}

// addAlertRules installs o.Alerts rules, rule i watching AlertItems
// items spread over the catalog.
func addAlertRules(ctx context.Context, url string, o SinkOptions) error {
	if o.Alerts <= 0 {
		return nil
	}
	conn, err := pgsink.Migrated(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for i := range o.Alerts {
		ids := make([]string, AlertItems)
		for k := range ids {
			ids[k] = fmt.Sprint((i*AlertItems + k) * 7919 % o.Items)
		}
		r := pgsink.Rule{Name: fmt.Sprint("bench-", i), Site: "ozon", IDs: ids, DropPct: 1, BackInStock: true,
			Webhook: "http://127.0.0.1:9/bench"}
		if err := pgsink.AddRule(ctx, conn, r); err != nil {
			return err
		}
	}
	return nil
}

// countAlerts is how many alerts the outbox holds.
func countAlerts(ctx context.Context, url string) (int, error) {
	conn, err := pgsink.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM alert_outbox").Scan(&n)
	return n, err
}

// fill writes the entries as 40-item pages, 8 writers at once.
func fill(ctx context.Context, rdb redis.UniversalClient, o SinkOptions) error {
	sink := results.NewSink(rdb, int64(o.Rows)*2)
	if err := results.MarkSink(ctx, rdb); err != nil {
		return err
	}
	const perPage, writers = 40, 8
	pages := (o.Rows + perPage - 1) / perPage
	g, gctx := errgroup.WithContext(ctx)
	at := time.Now().UTC()
	for w := range writers {
		g.Go(func() error {
			for p := w; p < pages; p += writers {
				items := make([]item.Item, 0, perPage)
				for i := p * perPage; i < min((p+1)*perPage, o.Rows); i++ {
					id := fmt.Sprint(i % o.Items)
					items = append(items, item.Item{Site: "ozon", ID: id, Title: "item " + id, Price: int64(10000 + i%997),
						Currency: "RUB", Seller: "seller", Rating: 4.5, Reviews: i % 300, URL: "https://ozon.test/p/" + id,
						FetchedAt: at.Add(time.Duration(i) * time.Microsecond)})
				}
				o := results.Origin{Task: fmt.Sprint("bench-", p), Schedule: "bench"}
				if err := sink.WritePageOf(gctx, o, 1, items); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// drain runs one sink until it has added every row, and returns how long.
func drain(ctx context.Context, rdb redis.UniversalClient, url string, o SinkOptions) (time.Duration, error) {
	var mu sync.Mutex
	added, done := 0, make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := pgsink.New(pgsink.Config{Redis: rdb, Postgres: url, Batch: o.Batch, OnCommit: func(_, n int) {
		mu.Lock()
		defer mu.Unlock()
		if added += n; added >= o.Rows {
			close(done)
		}
	}})
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- s.Run(ctx) }()
	select {
	case <-done:
		took := time.Since(start)
		cancel()
		<-errc
		return took, nil
	case err := <-errc:
		return 0, fmt.Errorf("the sink stopped before it drained the stream: %v", err)
	}
}

// scratchDB creates a database for the run on pgURL's server and returns
// its URL and what drops it.
func scratchDB(ctx context.Context, pgURL string) (string, func(), error) {
	admin, err := pgsink.Connect(ctx, pgURL)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("crawlq_bench_sink_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, fmt.Errorf("bench sink: create scratch database %s: %w", name, err)
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close(context.Background())
	}
	p, err := neturl.Parse(pgURL)
	if err != nil || p.Scheme == "" {
		drop()
		return "", nil, fmt.Errorf("bench sink: --postgres must be a postgres:// URL")
	}
	p.Path = "/" + name
	return p.String(), drop, nil
}

func cleanSink(rdb redis.UniversalClient) {
	ctx := context.Background()
	_ = results.UnmarkSink(ctx, rdb)
	_ = rdb.Del(ctx, results.StreamKey).Err()
	iter := rdb.Scan(ctx, 0, "crawlq:{jobs}:progress:bench-*", 1000).Iterator()
	for iter.Next(ctx) {
		_ = rdb.Del(ctx, iter.Val()).Err()
	}
}
