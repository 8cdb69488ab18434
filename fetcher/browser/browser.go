package browser

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"

	"crawlq/fetcher"
)

// ErrNoBrowser means no Chromium was found: not on PATH (chromium,
// chromium-browser, google-chrome) and no path given.
var ErrNoBrowser = errors.New("no chromium found")

// ErrBusy means every browser context of the worker is in use; the caller
// retries later.
var ErrBusy = errors.New("every browser context is busy")

// Config configures a Browser. Zero fields take the defaults named.
type Config struct {
	// Path is the Chromium binary. Default: the first of chromium,
	// chromium-browser, google-chrome, google-chrome-stable on PATH.
	Path string
	// Contexts is how many challenges are solved at once, each in its own
	// browser context of the one Chromium process. Default 1.
	Contexts int
	// Timeout bounds one solve: a page that has not cleared by then is
	// closed (its context disposed). Default 30s.
	Timeout time.Duration
	// CAFiles are PEM files of extra CAs (the worker's tls.ca_file): a
	// certificate chain that includes one of them is accepted, as the HTTP
	// client accepts it. Every other certificate is verified as usual.
	CAFiles []string
	// Skip are the request kinds (see Kind) a page's requests of are
	// refused without reaching the network, to save the proxy's
	// traffic; fetcher.BrowserJob.Skip overrides it per visit. Default (nil):
	// DefaultSkip. An empty, non-nil list loads everything.
	Skip []string
	// Logger logs the browser's starts and deaths. Default zap.NewNop().
	Logger *zap.Logger
}

// DefaultSkip are the kinds skipped by default: a page's scripts,
// stylesheets and XHRs load, its images, fonts and media do not.
var DefaultSkip = []string{"image", "font", "media"}

// Find returns the Chromium binary path would use: path itself when
// set (an *exec.Error when it is not an executable), else the first
// browser found on PATH; ErrNoBrowser if none.
func Find(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("chromium: %w", err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Browser is one worker's Chromium: started on the first Solve, restarted
// when it dies, one browser context per solve. Safe for concurrent use.
type Browser struct {
	cfg   Config
	spki  []string
	slots chan struct{}

	mu      sync.Mutex
	alloc   context.CancelFunc
	root    context.Context // the browser's chromedp context; nil: not running
	cancel  context.CancelFunc
	pid     int
	dataDir string
	starts  int
	live    int
	ends    map[int]context.CancelFunc // the solves running: their ends
	nextEnd int

	// interceptErrs counts the interception calls that failed.
	interceptErrs atomic.Int64
	// kinds counts the requests let through, by kind.
	kindsMu sync.Mutex
	kinds   map[string]int64
	// wrap, when set, stands between each page and its target (tests
	// make calls fail through it).
	wrap func(cdp.Session) cdp.Session
}

// New checks the binary and the CA files; the browser starts on the
// first Solve.
func New(cfg Config) (*Browser, error) {
	path, err := Find(cfg.Path)
	if err != nil {
		return nil, err
	}
	cfg.Path = path
	if cfg.Contexts <= 0 {
		cfg.Contexts = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Skip == nil {
		cfg.Skip = DefaultSkip
	}
	spki, err := spkiHashes(cfg.CAFiles)
	if err != nil {
		return nil, err
	}
	return &Browser{cfg: cfg, spki: spki, slots: make(chan struct{}, cfg.Contexts)}, nil
}

// Path is the Chromium binary in use.
func (b *Browser) Path() string { return b.cfg.Path }

// spkiHashes are the base64 SHA-256 hashes of the CAs' public keys, for
// --ignore-certificate-errors-spki-list.
func spkiHashes(files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("browser ca file: %w", err)
		}
		for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("browser ca file %s: %w", f, err)
			}
			sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
			out = append(out, base64.StdEncoding.EncodeToString(sum[:]))
		}
	}
	return out, nil
}

// running returns the browser's context, starting the process if it is
// not running or has died.
func (b *Browser) running() (context.Context, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.root != nil && b.root.Err() == nil && processAlive(b.pid) {
		return b.root, nil
	}
	if b.root != nil {
		b.cfg.Logger.Warn("browser died; restarting", zap.Int("pid", b.pid))
		b.stopLocked()
	}
	return b.root, b.startLocked()
}

// startLocked starts Chromium with a fresh profile directory.
func (b *Browser) startLocked() error {
	dir, err := os.MkdirTemp("", "crawlq-chromium-")
	if err != nil {
		return fmt.Errorf("browser profile dir: %w", err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), b.allocatorOptions(dir)...)
	root, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(root); err != nil {
		cancel()
		cancelAlloc()
		os.RemoveAll(dir)
		return fmt.Errorf("start chromium %s: %w", b.cfg.Path, err)
	}
	if err := b.blockBrowserFetches(root); err != nil {
		cancel()
		cancelAlloc()
		os.RemoveAll(dir)
		return fmt.Errorf("start chromium %s: %w", b.cfg.Path, err)
	}
	b.root, b.cancel, b.alloc, b.dataDir = root, cancel, cancelAlloc, dir
	if p := chromedp.FromContext(root).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	b.starts++
	b.cfg.Logger.Info("browser started", zap.String("path", b.cfg.Path), zap.Int("pid", b.pid))
	return nil
}

// allocatorOptions are Chromium's command line: the profile in dir, the
// flags that quiet it and make it a user's browser, and the testbed CAs' keys.
func (b *Browser) allocatorOptions(dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(b.cfg.Path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,InterestFeedContentSuggestions"),
	}
	opts = append(opts, undetected...)
	opts = append(opts, chromedp.Flag("accept-lang", acceptLangFlag(fetcher.DefaultAcceptLanguage)))
	if len(b.spki) > 0 {
		opts = append(opts, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(b.spki, ",")))
	}
	return opts
}

// undetected are the flags that make the browser a user's Chromium to
// the signals open bot detectors read (BotD 2.0): new headless (its
// window has a size, its plugins and languages are there; the old one is
// gone from Chromium), navigator.webdriver false (AutomationControlled
// off) and a desktop window size. The User-Agent (no "HeadlessChrome") is
// the session's, set per page.
var undetected = []chromedp.ExecAllocatorOption{
	chromedp.Flag("headless", "new"), chromedp.Flag("hide-scrollbars", true), chromedp.Flag("mute-audio", true),
	chromedp.Flag("disable-blink-features", "AutomationControlled"),
	chromedp.WindowSize(1920, 1080),
}

// acceptLangFlag is Chromium's --accept-lang list for an Accept-Language
// header ("ru-RU,ru;q=0.9,en" → "ru-RU,ru,en"): Chromium then sends that
// header itself, in its own place among the request's headers, and
// navigator.languages agrees with it. An override through DevTools would
// put it before Accept, where no user's Chromium sends it.
func acceptLangFlag(header string) string {
	var langs []string
	for _, part := range strings.Split(header, ",") {
		lang, _, _ := strings.Cut(part, ";")
		if lang = strings.TrimSpace(lang); lang != "" {
			langs = append(langs, lang)
		}
	}
	return strings.Join(langs, ",")
}

// stopLocked ends the process and removes its profile.
func (b *Browser) stopLocked() {
	if b.root == nil {
		return
	}
	b.cancel()
	b.alloc()
	os.RemoveAll(b.dataDir)
	b.root, b.pid = nil, 0
}

// closeWait bounds how long Close waits for the running solves to end.
const closeWait = 15 * time.Second

// Close ends the running solves, each of which brings its page to rest
// and closes its context (bounded by closeWait), then stops the browser:
// a browser stopped under a page lets the requests paused at its
// interception go. A later Solve starts it again.
func (b *Browser) Close() {
	b.mu.Lock()
	for _, end := range b.ends {
		end()
	}
	b.mu.Unlock()
	deadline := time.Now().Add(closeWait)
	for b.solving() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.ends) > 0 && b.pid > 0 {
		b.cfg.Logger.Warn("browser closed with solves still running; killing it", zap.Int("pid", b.pid))
		_ = syscall.Kill(b.pid, syscall.SIGKILL)
	}
	b.stopLocked()
}

// track notes a running solve and the func that ends it; the returned
// func forgets it.
func (b *Browser) track(end context.CancelFunc) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ends == nil {
		b.ends = map[int]context.CancelFunc{}
	}
	b.nextEnd++
	id := b.nextEnd
	b.ends[id] = end
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.ends, id)
	}
}

// solving is the number of solves running.
func (b *Browser) solving() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ends)
}

// Starts is how many times the process was started (restarts included).
func (b *Browser) Starts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts
}

// Live is the number of browser contexts open now.
func (b *Browser) Live() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live
}

// PID is the browser process's id, 0 when it is not running.
func (b *Browser) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pid
}

// RSS is the resident memory of the browser's processes (the browser and
// every process it started), in bytes, each process counted by its PSS so
// pages they share are counted once; 0 when it is not running.
func (b *Browser) RSS() int64 { return treeRSS(b.PID()) }

// InterceptionErrors is how many calls answering a request paused at the
// interception have failed (each ended its visit; see ErrInterception).
func (b *Browser) InterceptionErrors() int64 { return b.interceptErrs.Load() }

// Loaded is how many requests the browser's pages have let through since
// it was made, by kind (see Kind): the site's and its CDNs' together.
func (b *Browser) Loaded() map[string]int64 {
	b.kindsMu.Lock()
	defer b.kindsMu.Unlock()
	return maps.Clone(b.kinds)
}

// countKind counts a request of kind let through.
func (b *Browser) countKind(kind string) {
	b.kindsMu.Lock()
	defer b.kindsMu.Unlock()
	if b.kinds == nil {
		b.kinds = map[string]int64{}
	}
	b.kinds[kind]++
}

// addLive counts a browser context opening (+1) or closing (-1).
func (b *Browser) addLive(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live += n
}

// blockBrowserFetches refuses the requests the browser makes by itself,
// outside any page (a tab's /favicon.ico): they would reach the site
// through the session's proxy past its gate. A refusal that fails is
// logged and counted; the request stays paused, and goes nowhere.
func (b *Browser) blockBrowserFetches(root context.Context) error {
	c := chromedp.FromContext(root)
	events := cdp.Events(root, c.Browser, fetch.RequestPaused)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			_, err := cdp.Call(root, c.Browser, fetch.FailRequest, refusal(ev.RequestID))
			if err != nil && !gone(err) && root.Err() == nil {
				b.interceptErrs.Add(1)
				b.cfg.Logger.Warn("browser: a request of its own could not be refused", zap.String("request", string(ev.RequestID)), zap.Error(err))
			}
		}
	}()
	patterns := []*fetch.RequestPattern{{URLPattern: "*", ResourceType: network.ResourceTypeOther}, {URLPattern: "*", ResourceType: network.ResourceTypeImage}}
	_, err := cdp.Call(root, c.Browser, fetch.Enable, fetch.EnableParams{Patterns: patterns})
	return err
}
