package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Config configures Start.
type Config struct {
	// Proxies is the farm size; it overrides Farm.N when set. Default 10.
	Proxies int
	// Seed makes the catalog, sessions and flaky drops repeatable.
	Seed int64
	// CatalogSize is the number of products per site. Default 3000.
	CatalogSize int
	// Strict bans a too-fast IP for the rest of the run on every site.
	Strict bool
	// Fingerprint makes the HTTPS sites refuse a request whose TLS (JA4)
	// or HTTP/2 fingerprint is not the browser its User-Agent claims.
	// Default off.
	Fingerprint bool
	// LaxHeaders turns off the header check: by default a site refuses
	// (403, VerdictHeaders) a request whose headers are not those the
	// browser its User-Agent claims sends for the endpoint's kind (a page
	// load or the site's API call; see HeaderMismatch).
	LaxHeaders bool
	// Challenge puts the default JavaScript challenge (ChallengeRule) in
	// front of every site whose rules set none.
	Challenge bool
	// Sites overrides a site's rules; sites not named get DefaultRules.
	Sites map[string]SiteRules
	// Farm configures the proxy farm (N is taken from Proxies when set).
	Farm FarmConfig
	// Gateway, when set, starts a gateway proxy beside the farm
	// (Testbed.Gateway; GatewayLine is its line of a proxy list).
	Gateway *GatewayConfig
	// Modems, when set, starts a node of mobile modems beside the farm
	// (Testbed.Modems; ModemLine is a modem's line of a proxy list). Its
	// clock and seed default to the testbed's.
	Modems *ModemConfig
	// Dir receives proxies.txt. Default: a new temporary directory,
	// removed by Close.
	Dir string
	// PriceEvery is the testbed time between two price steps: at each,
	// about one product in MoverEvery*PriceChangeEvery changes its price
	// or stock (Catalog.ProductAt, Catalog.Changes), from the testbed's
	// start on. Default DefaultPriceEvery (a mover changes every few
	// hours); a test sets seconds to see changes; negative: prices never
	// move.
	PriceEvery time.Duration
	// Now is the sites' clock (request times, bans, the log). Default
	// time.Now. Tests inject a fake clock to avoid sleeping.
	Now func() time.Time
	// Logger receives the testbed's logs. Default: no logs.
	Logger *zap.Logger
}

// Testbed is a running farm plus the three sites.
type Testbed struct {
	// Farm is the proxy farm.
	Farm *Farm
	// Gateway is the gateway proxy (Config.Gateway), else nil.
	Gateway *Gateway
	// Modems is the modem node (Config.Modems), else nil.
	Modems *Modems
	// ProxiesFile is the path of the farm's proxy list.
	ProxiesFile string
	// Catalog is what the sites serve: its ProductAt is a product as the
	// sites show it at a moment, its Changes the price changes made.
	Catalog *Catalog
	// Log records every request to every site.
	Log *Log
	// CDN serves the sites' scripts from another host name (CDNHost).
	CDN *CDN
	// CA signs the HTTPS sites' certificate; CAFile holds it (PEM).
	CA     *CA
	CAFile string

	sites  map[string]*Site
	rules  map[string]SiteRules
	guard  *guard
	now    func() time.Time
	tmpDir string
	stop   chan struct{}
	once   sync.Once
}

// Start runs the farm and the three sites until ctx ends or Close.
func Start(ctx context.Context, cfg Config) (*Testbed, error) {
	cfg = cfg.withDefaults()
	catalog := NewCatalog(cfg.Seed, cfg.CatalogSize).Moving(cfg.Seed, cfg.PriceEvery, cfg.Now())
	tb := &Testbed{Catalog: catalog, Log: &Log{}, now: cfg.Now,
		rules: siteRules(cfg), sites: map[string]*Site{}, stop: make(chan struct{})}
	tb.guard = newGuard(tb.rules, cfg.Seed)
	tb.guard.logHidden(cfg.Now())
	if err := tb.startSites(cfg.Logger, !cfg.LaxHeaders); err != nil {
		tb.Close()
		return nil, err
	}
	if err := tb.startHTTPS(cfg.Fingerprint); err != nil {
		tb.Close()
		return nil, err
	}
	if err := tb.startFarm(ctx, cfg); err != nil {
		tb.Close()
		return nil, err
	}
	if err := tb.writeCA(); err != nil {
		tb.Close()
		return nil, err
	}
	go tb.watch(ctx)
	return tb, nil
}

// watch closes the testbed when ctx ends.
func (tb *Testbed) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		tb.Close()
	case <-tb.stop:
	}
}

func (c Config) withDefaults() Config {
	if c.Proxies > 0 {
		c.Farm.N = c.Proxies
	}
	if c.Farm.N == 0 {
		c.Farm.N = 10
	}
	if c.Farm.Seed == 0 {
		c.Farm.Seed = c.Seed
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.PriceEvery == 0 {
		c.PriceEvery = DefaultPriceEvery
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Farm.Logger == nil {
		c.Farm.Logger = c.Logger
	}
	return c
}

// siteRules merges the defaults, cfg.Sites and cfg.Strict.
func siteRules(cfg Config) map[string]SiteRules {
	rules := DefaultRules()
	for name, r := range cfg.Sites {
		rules[name] = r
	}
	for name, r := range rules {
		r.Strict = r.Strict || cfg.Strict
		if cfg.Challenge && r.Challenge == nil {
			r.Challenge = &ChallengeRule{}
		}
		rules[name] = r.withDefaults()
	}
	return rules
}

func (tb *Testbed) startSites(zl *zap.Logger, headers bool) error {
	cdn, err := startCDN(tb.now, zl)
	if err != nil {
		return err
	}
	tb.CDN = cdn
	d := siteDeps{cdn: cdn, guard: tb.guard, log: tb.Log, now: tb.now, zl: zl, headers: headers}
	for _, name := range SiteNames {
		s, err := startSite(name, tb.rules[name], tb.Catalog, d)
		if err != nil {
			return err
		}
		tb.sites[name] = s
		zl.Info("site started", zap.String("site", name), zap.String("url", s.URL()))
	}
	return nil
}

func (tb *Testbed) startFarm(ctx context.Context, cfg Config) error {
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "crawlq-testbed-")
		if err != nil {
			return fmt.Errorf("testbed dir: %w", err)
		}
		dir, tb.tmpDir = d, d
	}
	f, err := StartFarm(ctx, cfg.Farm)
	if err != nil {
		return err
	}
	tb.Farm = f
	tb.ProxiesFile = filepath.Join(dir, "proxies.txt")
	if cfg.Gateway != nil {
		if tb.Gateway, err = StartGateway(ctx, *cfg.Gateway); err != nil {
			return err
		}
	}
	if err := tb.startModems(ctx, cfg); err != nil {
		return err
	}
	return f.WriteProxyFile(tb.ProxiesFile)
}

// EchoURL is the testbed's IP-echo URL (plain http, on the CDN's host):
// it answers the client IP, the probe that learns a proxy's exit IP.
func (tb *Testbed) EchoURL() string { return tb.CDN.URL(false) + WhoamiPath }

// GatewayLine is the gateway's line of a proxy list with sessions
// session ids: its {session} username template, its TTL and idle time,
// and how crawlq learns its exit (its header when it has one, else a
// probe of EchoURL). "" without a gateway.
func (tb *Testbed) GatewayLine(sessions int) string {
	g := tb.Gateway
	if g == nil {
		return ""
	}
	exit := "exit=probe:" + tb.EchoURL()
	if g.cfg.ExitHeader != "" {
		exit = "exit=header:" + g.cfg.ExitHeader
	}
	return fmt.Sprintf("%s sessions=%d ttl=%s idle=%s %s", g.URL(g.cfg.User+"-session-{session}"),
		sessions, g.cfg.StickyTTL, g.cfg.Idle, exit)
}

// SiteURL is the base URL of site name ("" for an unknown name).
func (tb *Testbed) SiteURL(name string) string {
	if s := tb.sites[name]; s != nil {
		return s.URL()
	}
	return ""
}

// Sites maps each site name to its base URL.
func (tb *Testbed) Sites() map[string]string {
	out := map[string]string{}
	for name, s := range tb.sites {
		out[name] = s.URL()
	}
	return out
}

// Rules are the effective rules of every site.
func (tb *Testbed) Rules() map[string]SiteRules { return tb.rules }

// MinIntervals maps each site to its MinInterval, for Check.
func (tb *Testbed) MinIntervals() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, r := range tb.rules {
		out[name] = r.MinInterval
	}
	return out
}

// Banned reports whether ip is banned on site now.
func (tb *Testbed) Banned(site, ip string) bool { return tb.guard.isBanned(site, ip, tb.now()) }

// Check runs Check over the log with the sites' min intervals.
func (tb *Testbed) Check() Report { return Check(tb.Log.Entries(), tb.MinIntervals()) }

// Close stops the farm and the sites and removes the temporary directory.
// It is safe to call more than once.
func (tb *Testbed) Close() {
	tb.once.Do(func() { close(tb.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if tb.Farm != nil {
		tb.Farm.Close()
	}
	if tb.Gateway != nil {
		tb.Gateway.Close()
	}
	if tb.Modems != nil {
		tb.Modems.Close()
	}
	for _, s := range tb.sites {
		s.close(ctx)
	}
	if tb.CDN != nil {
		tb.CDN.close(ctx)
	}
	if tb.tmpDir != "" {
		os.RemoveAll(tb.tmpDir)
	}
}
