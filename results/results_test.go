package results_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/results/item"
)

var at = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// TestWritePageRecordsProgress: items and the page mark land together and
// a retry reads where the job got to.
func TestWritePageRecordsProgress(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBResults)
	ctx := context.Background()
	s := results.NewSink(rdb, 0)
	page1 := []item.Item{{Site: "ozon", ID: "1", Title: "a", FetchedAt: at}, {Site: "ozon", ID: "2", Title: "b", FetchedAt: at}}
	if err := s.WritePage(ctx, "task-1", 1, page1); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePage(ctx, "task-1", 2, []item.Item{{Site: "ozon", ID: "3", FetchedAt: at}}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Progress(ctx, "task-1")
	if err != nil || p != (results.Progress{Pages: 2, Items: 3}) {
		t.Fatalf("progress %+v %v, want 2 pages 3 items", p, err)
	}
	if p, _ := s.Progress(ctx, "other"); p != (results.Progress{}) {
		t.Errorf("a task that never ran has progress %+v", p)
	}
	got, err := results.Read(ctx, rdb, "ozon")
	if err != nil || len(got) != 3 || got[0].ID != "1" || got[2].ID != "3" {
		t.Fatalf("read %+v %v", got, err)
	}
}

// TestWritePageCallersWrites: a caller's write that fails inside the
// page's transaction is the caller's to read (the page is written); a
// transaction Redis refuses as a whole writes nothing and fails the page.
func TestWritePageCallersWrites(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBResults)
	ctx := context.Background()
	s := results.NewSink(rdb, 0)
	rdb.Set(ctx, "caller:text", "not a number", 0)
	var callers *redis.IntCmd
	err := s.WritePage(ctx, "task-1", 1, []item.Item{{Site: "ozon", ID: "1", FetchedAt: at}},
		func(p redis.Pipeliner) error { callers = p.Incr(ctx, "caller:text"); return nil })
	if err != nil {
		t.Fatalf("a caller's failed write failed the page: %v", err)
	}
	if callers.Err() == nil {
		t.Error("the caller's INCR of a string succeeded")
	}
	if p, _ := s.Progress(ctx, "task-1"); p != (results.Progress{Pages: 1, Items: 1}) {
		t.Errorf("progress %+v, want the page written", p)
	}
	err = s.WritePage(ctx, "task-1", 2, []item.Item{{Site: "ozon", ID: "2", FetchedAt: at}},
		func(p redis.Pipeliner) error { return p.Process(ctx, redis.NewCmd(ctx, "get")) }) // wrong arity: EXECABORT
	if err == nil {
		t.Fatal("a transaction Redis refused did not fail the page")
	}
	if p, _ := s.Progress(ctx, "task-1"); p != (results.Progress{Pages: 1, Items: 1}) {
		t.Errorf("progress %+v after the refused transaction, want page 1 only", p)
	}
}

// TestExportMergesAndFormats: one row per (site, id), later records fill
// fields in; --all keeps every record; CSV has the header and kopecks,
// and an unknown old price is an empty cell, not 0.
func TestExportMergesAndFormats(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBResults)
	ctx := context.Background()
	s := results.NewSink(rdb, 0)
	card := item.Item{Site: "avito", ID: "7", Title: "Чехол, \"синий\"", Price: 52600, Currency: "RUB", URL: "https://www.avito.ru/x_7", FetchedAt: at}
	sold := false
	page := item.Item{Site: "avito", ID: "7", Seller: "Техносфера", Rating: 4.2, Reviews: 12, InStock: &sold, FetchedAt: at.Add(time.Minute)}
	other := item.Item{Site: "wildberries", ID: "9", Title: "Кофе", Price: 100, Currency: "RUB", FetchedAt: at}
	for i, its := range [][]item.Item{{card, other}, {page}} {
		if err := s.WritePage(ctx, "t", i+1, its); err != nil {
			t.Fatal(err)
		}
	}
	var jl strings.Builder
	n, err := results.Export(ctx, rdb, &jl, results.ExportOptions{Site: "avito", Format: results.JSONL})
	if err != nil || n != 1 {
		t.Fatalf("export: %d %v", n, err)
	}
	want := `{"site":"avito","id":"7","title":"Чехол, \"синий\"","price":52600,"currency":"RUB","seller":"Техносфера","rating":4.2,"reviews":12,"in_stock":false,"url":"https://www.avito.ru/x_7","fetched_at":"2026-12-02T10:01:00Z"}` + "\n"
	if diff := cmp.Diff(want, jl.String()); diff != "" {
		t.Errorf("merged jsonl (-want +got):\n%s", diff)
	}
	if n, _ := results.Export(ctx, rdb, &strings.Builder{}, results.ExportOptions{All: true}); n != 3 {
		t.Errorf("--all exported %d records, want 3", n)
	}
	var csv strings.Builder
	if _, err := results.Export(ctx, rdb, &csv, results.ExportOptions{Site: "avito", Format: results.CSV}); err != nil {
		t.Fatal(err)
	}
	wantCSV := "site,id,title,price,old_price,currency,seller,rating,reviews,in_stock,url,fetched_at\n" +
		"avito,7,\"Чехол, \"\"синий\"\"\",52600,,RUB,Техносфера,4.2,12,false,https://www.avito.ru/x_7,2026-12-02T10:01:00Z\n"
	if diff := cmp.Diff(wantCSV, csv.String()); diff != "" {
		t.Errorf("csv (-want +got):\n%s", diff)
	}
	if _, err := results.ParseFormat("xml"); err == nil {
		t.Error("format xml accepted")
	}
}

// TestUnknownOldPriceIsEmpty: an item whose old price or stock is
// unknown has an empty old_price or in_stock cell in CSV and no
// old_price in JSON lines, never 0 or false; a known one is written.
func TestUnknownOldPriceIsEmpty(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBResults)
	ctx := context.Background()
	in := true
	its := []item.Item{{Site: "ozon", ID: "1", Price: 100, Currency: "RUB", FetchedAt: at},
		{Site: "ozon", ID: "2", Price: 100, OldPrice: 150, Currency: "RUB", InStock: &in, FetchedAt: at}}
	if err := results.NewSink(rdb, 0).WritePage(ctx, "t", 1, its); err != nil {
		t.Fatal(err)
	}
	var csv, jl strings.Builder
	if _, err := results.Export(ctx, rdb, &csv, results.ExportOptions{Format: results.CSV}); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Export(ctx, rdb, &jl, results.ExportOptions{Format: results.JSONL}); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(csv.String(), "\n")
	if !strings.HasPrefix(rows[1], "ozon,1,,100,,RUB,,0,0,,,") || !strings.HasPrefix(rows[2], "ozon,2,,100,150,RUB,,0,0,true,,") {
		t.Errorf("csv rows, want an empty old_price and in_stock for item 1, 150 and true for item 2:\n%s", csv.String())
	}
	lines := strings.Split(jl.String(), "\n")
	if strings.Contains(lines[0], "old_price") || !strings.Contains(lines[1], `"old_price":150`) {
		t.Errorf("jsonl, want no old_price for item 1 and 150 for item 2:\n%s", jl.String())
	}
}
