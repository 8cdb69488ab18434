package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// chromiumPath finds Debian's chromium; the browser test fails without it,
// saying how to install it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: install it with `apt-get update && apt-get install -y chromium` " +
		"(.ci/run does this when it is missing)")
	return ""
}

// newBrowser starts a headless chromium for the test and returns a tab
// context; the browser stops after the test.
func newBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	return ctx
}

// poolTableJS reads the dashboard's per-site pool table into
// site -> [ready, leased, cooling, quarantined, cleared].
const poolTableJS = `Object.fromEntries([...document.querySelectorAll('#pool tr[data-site]')].map(tr =>
  [tr.dataset.site, ['ready','leased','cooling','quarantined','cleared'].map(c => +tr.querySelector('td.'+c).textContent)]))`

// proxyRowsJS reads the proxy table's rows as "id/site/state".
const proxyRowsJS = `[...document.querySelectorAll('#proxies tr.proxy-row')].map(tr =>
  tr.dataset.id + '/' + tr.dataset.site + '/' + tr.querySelector('[data-f=state]').textContent)`

func TestBrowserDashboardAndAsynqUI(t *testing.T) {
	bin := chromiumPath(t)
	c := newCluster(t)
	base := startServer(t, Config{Redis: c.opt, Broker: c.broker, Refresh: time.Minute})
	ctx := newBrowser(t, bin)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	dir := t.TempDir()

	t.Run("dashboard", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#proxies"))); err != nil {
			t.Fatalf("load dashboard: %v", err)
		}
		checkPoolTable(t, ctx, c)
		checkProxyRows(t, ctx, c)
		screenshot(t, ctx, filepath.Join(dir, "dashboard.png"))
	})
	t.Run("asynq UI", func(t *testing.T) {
		err := chromedp.Do(ctx, chromedp.Navigate(base+"/monitoring/"), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`['wildberries','ozon','avito'].every(q => document.body && document.body.innerText.includes(q))`,
				chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second))(ctx, tg)
			return err
		}))
		if err != nil {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
			t.Fatalf("Asynq UI did not list the three site queues: %v\npage text:\n%s", err, text)
		}
		screenshot(t, ctx, filepath.Join(dir, "monitoring.png"))
	})
}

func checkPoolTable(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string][]int](poolTableJS))
	if err != nil {
		t.Fatalf("read pool table: %v", err)
	}
	ps, err := c.broker.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{}
	for site, s := range ps.Sites {
		want[site] = []int{s.Ready, s.Leased, s.Cooling, s.Quarantined, s.Cleared}
	}
	if len(want) == 0 || want["wildberries"][4] != 1 {
		t.Fatalf("seeded pool has no sites or no cleared proxy on wildberries: %v", want)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pool table (-broker +page):\n%s", d)
	}
}

func checkProxyRows(t *testing.T, ctx context.Context, c *cluster) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](proxyRowsJS))
	if err != nil {
		t.Fatalf("read proxy rows: %v", err)
	}
	ps, err := c.broker.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range proxyRows(ps.Proxies) {
		want = append(want, r.ID+"/"+r.Site+"/"+r.State)
	}
	if len(want) == 0 {
		t.Fatal("seeded pool has no proxies")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("proxy rows (-broker +page):\n%s", d)
	}
}

// screenshot writes a full-page PNG and checks it is not empty.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("screenshot %s empty: %v", path, err)
	}
	if keep := os.Getenv("CRAWLQ_SCREENSHOTS"); keep != "" {
		_ = os.WriteFile(filepath.Join(keep, filepath.Base(path)), png, 0o644)
	}
	t.Logf("screenshot %s (%d bytes)", path, fi.Size())
}
