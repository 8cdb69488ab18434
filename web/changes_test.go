package web

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestChangesSection renders the latest changes as a table (prices in
// roubles, falls and rises signed as pgsink.FormatChange prints them, titles escaped, each row's id and
// title linking to the item's page), and says when there are none.
func TestChangesSection(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	rows := []PriceChange{{At: at, Site: "ozon", ID: "7", Title: "<b>kettle</b>", From: 100000, To: 80000, ChangePct: -20},
		{At: at, Site: "avito", ID: "9", Title: "sofa", From: 500, To: 550, ChangePct: 10}}
	h, err := ChangesSection(func(context.Context) ([]PriceChange, error) { return rows, nil }).Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1000.00", "800.00", "<td>−20%</td>", "<td>+10%</td>", "&lt;b&gt;kettle", "2026-03-01 10:00:00",
		`<a href="/item/ozon/7">&lt;b&gt;kettle`, `<a href="/item/avito/9">9</a>`} {
		if !strings.Contains(string(h), want) {
			t.Errorf("section lacks %q:\n%s", want, h)
		}
	}
	h, _ = ChangesSection(func(context.Context) ([]PriceChange, error) { return nil, nil }).Render(context.Background())
	if !strings.Contains(string(h), "No price changes") {
		t.Errorf("empty section: %s", h)
	}
}
