package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
	"crawlq/results/pgsink"
)

// testOutDir is where a test leaves what a person should look at
// (screenshots): $CRAWLQ_TEST_OUT/<test>, or testdata/out/<test> (git
// ignores it); kept after the test, its path logged.
func testOutDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("CRAWLQ_TEST_OUT")
	if root == "" {
		root = filepath.Join("testdata", "out")
	}
	dir, err := filepath.Abs(filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_")))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("test output directory: %v", err)
	}
	t.Logf("test output in %s", dir)
	return dir
}

// storeChanges is `crawlq web`'s latest changes section over store, since
// the kettle's first sighting.
func storeChanges(store pgsink.Querier) func(context.Context) ([]PriceChange, error) {
	return func(ctx context.Context) ([]PriceChange, error) {
		cs, err := pgsink.Changes(ctx, store, historyStart, 0, 20)
		out := make([]PriceChange, len(cs))
		for i, c := range cs {
			out[i] = PriceChange{At: c.At, Site: c.Site, ID: c.ID, Title: c.Title, From: c.From, To: c.To, ChangePct: c.ChangePct}
		}
		return out, err
	}
}

// itemChartJS reads the rendered chart: its points and steps as the page
// states them, the level changes of the price line's path, the shaded
// out-of-stock spans, the observation rows, and the chart's drawn width.
const itemChartJS = `(() => {
  const svg = document.querySelector('svg#price-chart');
  if (!svg) return null;
  const d = svg.querySelector('path.price').getAttribute('d');
  return {points: +svg.dataset.points, steps: +svg.dataset.steps, levels: (d.match(/V/g) || []).length,
    oos: svg.querySelectorAll('rect.oos').length, rows: document.querySelectorAll('#observations tbody tr').length,
    width: Math.round(svg.getBoundingClientRect().width), csv: document.querySelector('a#csv').getAttribute('href')};
})()`

// itemChart is what itemChartJS reads.
type itemChart struct {
	Points, Steps, Levels, OOS, Rows, Width int
	CSV                                     string
}

// TestBrowserItemPage: in headless Chromium, the dashboard's latest
// changes link to the item, its search form finds it by words of the
// title, and its page draws the price chart: one level change per price
// change of its 30 observations, a point per step, both out-of-stock
// spans, every observation in the table. The page is under 100 KB; a
// screenshot is left in the test's output directory.
func TestBrowserItemPage(t *testing.T) {
	bin := chromiumPath(t)
	testredis.Client(t, testredis.DBWeb)
	its := kettleHistory(30)
	store := newItemStore(t, its...)
	base := startServer(t, Config{Redis: asynq.RedisClientOpt{Addr: testredis.Addr(t), DB: testredis.DBWeb},
		Refresh: time.Minute, Store: store, Sections: []Section{ChangesSection(storeChanges(store))}})
	ctx := newBrowser(t, bin)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	dir := testOutDir(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#item-search")); err != nil {
		t.Fatalf("load the dashboard: %v", err)
	}
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(`[data-section="changes"] table a`, "href"))
	if err != nil || link.Value != "/item/ozon/7" {
		t.Errorf("the latest change links to %q (%v), want /item/ozon/7", link.Value, err)
	}
	err = chromedp.Do(ctx, chromedp.SendKeys(`#item-search input[name="q"]`, "kettle ELECTRIC"),
		chromedp.Submit(`#item-search input[name="q"]`), chromedp.WaitVisible("#results"),
		chromedp.Click(`#results a[href="/item/ozon/7"]`), chromedp.WaitVisible("svg#price-chart"))
	if err != nil {
		t.Fatalf("search the dashboard's form, open the item: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[itemChart](itemChartJS))
	if err != nil {
		t.Fatalf("read the chart: %v", err)
	}
	steps, points := wantSteps(its)
	want := itemChart{Points: points, Steps: steps, Levels: steps, OOS: 2, Rows: 30, Width: got.Width, CSV: "/item/ozon/7.csv"}
	if got != want || got.Width < 600 || steps < 10 {
		t.Errorf("chart %+v, want %+v (drawn at least 600 px wide, at least 10 steps)", got, want)
	}
	screenshot(t, ctx, filepath.Join(dir, "item.png"))
	size := pageSize(t, base+"/item/ozon/7")
	if size >= 100<<10 {
		t.Errorf("item page: %d bytes, want < 100 KB", size)
	}
	t.Logf("item page of %d observations: %d bytes, %d chart points, %d steps", len(its), size, got.Points, got.Steps)
}

// pageSize is the length of url's body.
func pageSize(t *testing.T, url string) int {
	t.Helper()
	code, body := get(t, http.MethodGet, url, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", url, code)
	}
	return len(body)
}
