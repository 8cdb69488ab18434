package sessions_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

const wb = testbed.SiteWildberries

// world is a testbed, a broker over its farm and the request machinery.
type world struct {
	tb      *testbed.Testbed
	rdb     *redis.Client
	broker  *proxies.RedisBroker
	fetcher *fetcher.Fetcher
	detect  *detect.Detector
	// rotator is a modem world's (modemWorld), started.
	rotator *sessions.Rotator
}

func newWorld(t *testing.T, nproxies int) *world {
	t.Helper()
	ctx := context.Background()
	rdb := testredis.Client(t, testredis.DBSessions)
	tb, err := testbed.Start(ctx, testbed.Config{Proxies: nproxies, Seed: 7})
	if err != nil {
		t.Fatalf("start testbed: %v", err)
	}
	t.Cleanup(tb.Close)
	return &world{tb: tb, rdb: rdb, broker: brokerFor(t, ctx, rdb, tb, true),
		fetcher: fetcher.New(fetcher.Config{Timeout: 5 * time.Second}), detect: detect.New(detect.Builtin())}
}

// brokerFor builds a broker whose site intervals are the testbed's; with
// load it imports the testbed's farm.
func brokerFor(t *testing.T, ctx context.Context, rdb *redis.Client, tb *testbed.Testbed, load bool) *proxies.RedisBroker {
	t.Helper()
	sites := map[string]proxies.SiteConfig{}
	for site, mi := range tb.MinIntervals() {
		sites[site] = proxies.SiteConfig{MinInterval: mi}
	}
	if !load {
		return proxies.NewRedisBroker(rdb, proxies.Config{Sites: sites})
	}
	return farmBroker(t, ctx, rdb, tb, proxies.Config{Sites: sites})
}

// farmBroker builds a broker of cfg on rdb and imports the testbed's farm
// into it, class datacenter.
func farmBroker(t *testing.T, ctx context.Context, rdb *redis.Client, tb *testbed.Testbed, cfg proxies.Config) *proxies.RedisBroker {
	t.Helper()
	b := proxies.NewRedisBroker(rdb, cfg)
	ps, err := proxies.ParseFile(tb.ProxiesFile)
	if err != nil {
		t.Fatalf("parse farm proxies: %v", err)
	}
	if _, err := b.Import(ctx, ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatalf("import: %v", err)
	}
	return b
}

// manager builds a manager whose sessions store themselves, its broker
// on its records' Redis.
func (w *world) manager(holder string, ttl time.Duration) *sessions.Manager {
	return sessions.NewManager(sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, BrokerSharesRedis: true,
		Holder: holder, LeaseTTL: ttl})
}

// callerStoring builds a manager whose sessions a caller stores in its
// own transactions (Config.SharesRedis); Preload queues no lease.
func (w *world) callerStoring(holder string, ttl time.Duration) *sessions.Manager {
	return sessions.NewManager(sessions.Config{Shape: wbShape, Broker: w.broker, Redis: w.rdb, SharesRedis: true,
		Holder: holder, LeaseTTL: ttl})
}

func searchURL(base string, page int) string {
	return base + testbed.WBSearchPath + "?" + url.Values{"query": {""}, "page": {strconv.Itoa(page)}}.Encode()
}

func siteEntries(tb *testbed.Testbed, site string) []testbed.Entry {
	var out []testbed.Entry
	for _, e := range tb.Log.Entries() {
		if e.Site == site {
			out = append(out, e)
		}
	}
	return out
}

// TestFivePageJobUsesOneIPAndItsCookies: a 5-page job is one user.
func TestFivePageJobUsesOneIPAndItsCookies(t *testing.T) {
	w := newWorld(t, 3)
	ctx := context.Background()
	s, err := w.manager("server-1", 10*time.Second).Open(ctx, "job-5pages", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for page := 1; page <= 5; page++ {
		step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.tb.SiteURL(wb), page), page)
		if err != nil || step.Verdict.Kind != detect.OK || step.Action != sessions.Continue {
			t.Fatalf("page %d: verdict %v action %v err %v", page, step.Verdict, step.Action, err)
		}
	}
	if err := s.Finish(ctx, proxies.OK(0)); err != nil {
		t.Fatalf("finish: %v", err)
	}
	es := siteEntries(w.tb, wb)
	if len(es) != 5 {
		t.Fatalf("testbed saw %d requests, want 5", len(es))
	}
	for i, e := range es {
		if e.IP != es[0].IP || e.Session != es[0].Session || e.Issued != (i == 0) {
			t.Errorf("request %d: ip %s session %s issued %v; want ip %s session %s issued only on the first",
				i, e.IP, e.Session, e.Issued, es[0].IP, es[0].Session)
		}
	}
	if r := w.tb.Check(); !r.OK() {
		t.Errorf("invariants broken: %+v", r)
	}
}

// TestVerdictActions: each verdict leaves the session and the proxy in the
// state the mapping promises.
func TestVerdictActions(t *testing.T) {
	tests := []struct {
		name       string
		verdict    detect.Verdict
		action     sessions.Action
		state      string // proxy state for the site afterwards
		keepRecord bool
	}{
		{name: "ok continues", verdict: detect.Verdict{Kind: detect.OK}, action: sessions.Continue, state: "leased", keepRecord: true},
		{name: "blocked bans", verdict: detect.Verdict{Kind: detect.Blocked, Reason: "captcha"}, action: sessions.Retired, state: "quarantined"},
		{name: "rate limited cools down", verdict: detect.Verdict{Kind: detect.RateLimited, RetryAfter: time.Hour}, action: sessions.Paused, state: "cooling", keepRecord: true},
		{name: "proxy failure counts", verdict: detect.Verdict{Kind: detect.ProxyFailure}, action: sessions.Continue, state: "leased", keepRecord: true},
		{name: "not found is neutral", verdict: detect.Verdict{Kind: detect.NotFound}, action: sessions.Continue, state: "leased", keepRecord: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1)
			ctx := context.Background()
			s, err := w.manager("s1", 10*time.Second).Open(ctx, "job-"+tc.name, wb, proxies.Datacenter)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close(ctx, proxies.Neutral())
			act, err := s.Record(ctx, tc.verdict, time.Millisecond)
			if err != nil || act != tc.action {
				t.Fatalf("record %v: action %v err %v, want %v", tc.verdict, act, err, tc.action)
			}
			if got := proxyState(t, w.broker, s.ProxyID(), wb); got != tc.state {
				t.Errorf("proxy state %q, want %q", got, tc.state)
			}
			n, _ := w.rdb.Exists(ctx, sessions.RecordKey("job-"+tc.name)).Result()
			if (n == 1) != tc.keepRecord {
				t.Errorf("stored session exists=%v, want %v", n == 1, tc.keepRecord)
			}
		})
	}
}

// TestErrorScoreRetiresAtThree: three bad answers retire the session,
// good ones take half a point off.
func TestErrorScoreRetiresAtThree(t *testing.T) {
	w := newWorld(t, 1)
	ctx := context.Background()
	s, err := w.manager("s1", 10*time.Second).Open(ctx, "job-score", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	bad, good := detect.Verdict{Kind: detect.ProxyFailure}, detect.Verdict{Kind: detect.OK}
	for i, v := range []detect.Verdict{bad, bad, good, bad} {
		if act, _ := s.Record(ctx, v, 0); act != sessions.Continue {
			t.Fatalf("answer %d retired early at score %v", i, s.Score())
		}
	}
	if s.Score() != 2.5 {
		t.Fatalf("score %v, want 2.5", s.Score())
	}
	if act, _ := s.Record(ctx, bad, 0); act != sessions.Retired {
		t.Fatalf("score %v did not retire", s.Score())
	}
	if err := s.Pace(ctx); err != sessions.ErrClosed {
		t.Errorf("pace after retire: %v, want ErrClosed", err)
	}
}

func proxyState(t *testing.T, b *proxies.RedisBroker, id, site string) string {
	t.Helper()
	st, err := b.Stats(context.Background())
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	for _, p := range st.Proxies {
		if p.ID == id {
			return p.Sites[site].State
		}
	}
	t.Fatalf("proxy %s not in stats", id)
	return ""
}
