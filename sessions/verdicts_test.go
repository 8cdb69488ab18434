package sessions_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// TestPunishmentsAndFaultsDriveTheBroker: each testbed punishment and each
// proxy fault yields the expected verdict, and the session's outcome puts
// the proxy in the expected broker state.
func TestPunishmentsAndFaultsDriveTheBroker(t *testing.T) {
	strict := func(site string, p testbed.Punishment) map[string]testbed.SiteRules {
		// one request per hour: the second request of the test is punished
		return map[string]testbed.SiteRules{site: {MinInterval: time.Hour, Punishment: p, BanFor: time.Hour}}
	}
	tests := []struct {
		name    string
		site    string
		kind    string
		sites   map[string]testbed.SiteRules
		farm    testbed.FarmConfig
		badPass bool
		verdict detect.Kind
		state   string
	}{
		{name: "429 with Retry-After", site: "wildberries", kind: "search", sites: strict("wildberries", testbed.TooMany429), verdict: detect.RateLimited, state: "cooling"},
		{name: "403", site: "ozon", kind: "search", sites: strict("ozon", testbed.Forbidden403), verdict: detect.Blocked, state: "quarantined"},
		{name: "200 captcha page", site: "avito", kind: "search", sites: strict("avito", testbed.CaptchaPage200), verdict: detect.Blocked, state: "quarantined"},
		// Avito bans the IP and says so at 429 ("Доступ ограничен: проблема
		// с IP"): quarantined, not cooled down to be banned again.
		{name: "avito 429 IP page", site: "avito", kind: "search", sites: strict("avito", testbed.BlockPage429), verdict: detect.Blocked, state: "quarantined"},
		{name: "avito 206 IP page", site: "avito", kind: "search", sites: strict("avito", testbed.BlockPage206), verdict: detect.Blocked, state: "quarantined"},
		{name: "avito 439", site: "avito", kind: "search", sites: strict("avito", testbed.Status439), verdict: detect.Blocked, state: "quarantined"},
		{name: "captcha redirect", site: "ozon", kind: "search", sites: strict("ozon", testbed.CaptchaRedirect), verdict: detect.Blocked, state: "quarantined"},
		{name: "dead proxy", site: "wildberries", kind: "search", farm: testbed.FarmConfig{Faults: map[int]testbed.Fault{0: {Dead: true}}}, verdict: detect.ProxyFailure, state: "cooling"},
		{name: "slow proxy past the timeout", site: "wildberries", kind: "search", farm: testbed.FarmConfig{Faults: map[int]testbed.Fault{0: {Slow: 3 * time.Second}}}, verdict: detect.ProxyFailure, state: "cooling"},
		{name: "407 wrong proxy password", site: "wildberries", kind: "search", farm: testbed.FarmConfig{Auth: true}, badPass: true, verdict: detect.ProxyFailure, state: "cooling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := testredis.Client(t, testredis.DBSessions)
			tb, err := testbed.Start(ctx, testbed.Config{Proxies: 1, Sites: tc.sites, Farm: tc.farm})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			b := proxies.NewRedisBroker(rdb, proxies.Config{Default: proxies.SiteConfig{MinInterval: time.Millisecond}})
			importOne(t, b, tb, tc.badPass)
			// a short timeout only where the case is the timeout: elsewhere a
			// loaded machine's slow answer must not turn into a proxy failure
			timeout := 10 * time.Second
			if tc.farm.Faults[0].Slow > 0 {
				timeout = 500 * time.Millisecond
			}
			f := fetcher.New(fetcher.Config{Timeout: timeout, ResponseHeaderTimeout: timeout})
			m := sessions.NewManager(sessions.Config{Shape: wbShape, Broker: b, Redis: rdb, Holder: "s1", LeaseTTL: 10 * time.Second})
			s, err := m.Open(ctx, "job", tc.site, proxies.Datacenter)
			if err != nil {
				t.Fatal(err)
			}
			u := firstPage(t, tb, tc.site)
			step := sessions.Step{Verdict: detect.Verdict{Kind: detect.OK}}
			for i := 0; i < 2 && step.Verdict.Kind == detect.OK; i++ { // the second request is the punished one
				if step, err = s.Get(ctx, f, detect.New(detect.Builtin()), tc.kind, u, 1); err != nil {
					t.Fatal(err)
				}
			}
			if step.Verdict.Kind != tc.verdict {
				t.Fatalf("verdict %v, want %v", step.Verdict, tc.verdict)
			}
			if tc.verdict == detect.RateLimited && step.Verdict.RetryAfter <= 0 {
				t.Errorf("rate limited without its Retry-After: %v", step.Verdict)
			}
			_ = s.Finish(ctx, sessions.Outcome(step.Verdict, 0)) // a no-op when Record already released it
			if got := proxyState(t, b, s.ProxyID(), tc.site); got != tc.state {
				t.Errorf("proxy state %q after %v, want %q", got, step.Verdict, tc.state)
			}
		})
	}
}

func importOne(t *testing.T, b *proxies.RedisBroker, tb *testbed.Testbed, badPass bool) {
	t.Helper()
	raw := tb.Farm.Proxies()[0].URL
	if badPass {
		u, _ := url.Parse(raw)
		u.User = url.UserPassword(u.User.Username(), "wrong")
		raw = u.String()
	}
	p, err := proxies.ParseLine(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Import(context.Background(), []proxies.Proxy{p}, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
}

func firstPage(t *testing.T, tb *testbed.Testbed, site string) string {
	t.Helper()
	base := tb.SiteURL(site)
	switch site {
	case "wildberries":
		return searchURL(base, 1)
	case "ozon":
		return base + testbed.OzonSearchPath + "?text=&page=1"
	}
	return base + "/" + strings.TrimPrefix("rossiya?q=&p=1", "/")
}
