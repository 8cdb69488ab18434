package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
)

// countingSection renders "render N", N counting its renders, the way the
// schedules and price changes sections render what is stored now.
func countingSection(id string) (Section, *atomic.Int64) {
	var n atomic.Int64
	return Section{ID: id, Title: "Counting", Render: func(context.Context) (template.HTML, error) {
		return template.HTML(fmt.Sprintf(`<p class="n">render %d</p>`, n.Add(1))), nil
	}}, &n
}

// TestSectionEndpoint: /api/section/ID answers the section's current body
// (rendered anew on every call, an error in its place), and 404 for an ID
// the page has no section for.
func TestSectionEndpoint(t *testing.T) {
	testredis.Client(t, testredis.DBWeb)
	counting, _ := countingSection("counting")
	failing := Section{ID: "failing", Title: "Failing", Render: func(context.Context) (template.HTML, error) {
		return "", errors.New("postgres <down>")
	}}
	s, err := NewServer(Config{Redis: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb},
		Sections: []Section{counting, failing}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	base := startHandler(t, s)
	for i := 1; i <= 2; i++ {
		if code, body := get(t, "GET", base+"/api/section/counting", ""); code != http.StatusOK || body != fmt.Sprintf(`<p class="n">render %d</p>`, i) {
			t.Errorf("GET /api/section/counting #%d = %d %q", i, code, body)
		}
	}
	if code, body := get(t, "GET", base+"/api/section/failing", ""); code != http.StatusOK || body != `<p class="quarantined">postgres &lt;down&gt;</p>` {
		t.Errorf("GET /api/section/failing = %d %q", code, body)
	}
	if code, _ := get(t, "GET", base+"/api/section/nope", ""); code != http.StatusNotFound {
		t.Errorf("GET /api/section/nope = %d, want 404", code)
	}
}

// TestBrowserSectionsRefreshInPlace: in a real browser, a section of the
// pool page (schedules, price changes) takes its new body at the page's
// refresh, like the rest of the page, without a reload.
func TestBrowserSectionsRefreshInPlace(t *testing.T) {
	bin := chromiumPath(t)
	testredis.Client(t, testredis.DBWeb)
	counting, renders := countingSection("counting")
	base := startServer(t, Config{Redis: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb},
		Refresh: time.Second, Sections: []Section{counting}})
	ctx := newBrowser(t, bin)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	const text = `document.querySelector('[data-section=counting] p.n').textContent`
	err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("[data-section=counting] p.n")),
		chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`))
	if err != nil {
		t.Fatalf("load dashboard: %v", err)
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](text))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](text+` !== `+strconv.Quote(first), chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(30*time.Second))(ctx, tg)
		return err
	}))
	if err != nil {
		t.Fatalf("the section kept its body %q (%d renders): %v", first, renders.Load(), err)
	}
	now, err := chromedp.Run(ctx, chromedp.Evaluate[string](text))
	if err != nil {
		t.Fatal(err)
	}
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.loadedOnce === true`)); err != nil || !same {
		t.Errorf("the page was reloaded to show section %q (%v), want it refreshed in place", now, err)
	}
}
