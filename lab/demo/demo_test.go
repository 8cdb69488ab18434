package demo

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"crawlq/testbed"
)

// testMix is small: one short search with follow, one direct product and
// one search with no results per site.
var testMix = Mix{Searches: 1, Pages: 1, MinMatches: 3, MaxMatches: 6, Products: 1, Empty: 1}

// TestRunCrawlsEverySite runs the real demo on the embedded Redis with a
// small mix: every site completes jobs, items come out, the sites see no
// I1/I2 violation, and nothing is left running.
func TestRunCrawlsEverySite(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	sum, err := Run(context.Background(), Config{Duration: 25 * time.Second, Mix: testMix, Proxies: 12, Progress: &out, NoChallenge: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, name := range testbed.SiteNames {
		if st := sum.Sites[name]; st.Completed == 0 || st.Items == 0 {
			t.Errorf("%s: %d completed, %d items; want both > 0 (%+v)", name, st.Completed, st.Items, st)
		}
	}
	if sum.Items == 0 || sum.Pages == 0 {
		t.Errorf("items %d, pages %d; want > 0", sum.Items, sum.Pages)
	}
	if sum.I1Violations != 0 || sum.I2Violations != 0 {
		t.Errorf("violations I1 %d, I2 %d; want 0", sum.I1Violations, sum.I2Violations)
	}
	checkBanHandling(t, sum)
	checkModems(t, sum)
	if sum.FingerprintRefusals != 0 || sum.HTTPSRequests != sum.Requests || sum.Completed != sum.Jobs {
		t.Errorf("fingerprint refusals %d, https requests %d of %d, completed %d of %d jobs; want 0, all, all",
			sum.FingerprintRefusals, sum.HTTPSRequests, sum.Requests, sum.Completed, sum.Jobs)
	}
	t.Logf("summary: %+v\nprogress:\n%s", sum, out.String())
}

// TestRunThroughTheGateway runs the demo with the smallest farm beside a
// gateway of 4 exit IPs: the gateway carries site requests, each of its
// sessions learned its exit IP by a probe, and I1, I2 and the bans hold
// on the exit IPs while every job completes.
func TestRunThroughTheGateway(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	sum, err := Run(context.Background(), Config{Duration: 25 * time.Second, Mix: testMix, Proxies: 7,
		GatewayExits: 4, GatewaySessions: 4, Progress: &out, NoChallenge: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	g := sum.Gateway
	if g == nil || g.Requests == 0 || g.Probes == 0 || g.ExitsUsed == 0 || g.ExitsUsed > 4 || g.SessionIDs != 4 {
		t.Fatalf("gateway %+v: want requests through it, probes, at most 4 exits used, 4 session ids", g)
	}
	if sum.I1Violations != 0 || sum.I2Violations != 0 || sum.Bans != 0 || sum.Completed != sum.Jobs {
		t.Errorf("I1 %d, I2 %d, bans %d, completed %d of %d; want 0, 0, 0, all",
			sum.I1Violations, sum.I2Violations, sum.Bans, sum.Completed, sum.Jobs)
	}
	var text strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "gateway: 4 session ids on 4 exit IPs") {
		t.Errorf("summary has no gateway line:\n%s", text.String())
	}
	t.Logf("gateway %+v\n%s", *g, text.String())
}

// TestRunWithChallenges runs the demo with the sites' JavaScript
// challenges on (Chromium from PATH, as .ci/run installs it): every job
// completes, every browser visit clears its challenge through the
// session's own proxy, Avito's proof of work is solved over HTTP with no
// proxy quarantined for it, no clearance cookie is used from another IP
// or User-Agent, I1/I2 hold and no proxy is quarantined for a challenge.
func TestRunWithChallenges(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	sum, err := Run(context.Background(), Config{Duration: 2 * time.Minute, Mix: testMix, Proxies: 12, Progress: &out})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !sum.ChallengeMode {
		t.Fatalf("no challenge mode: chromium is needed (.ci/run installs it)\n%s", out.String())
	}
	if sum.Completed != sum.Jobs || sum.Challenges == 0 || sum.ChallengesSolved != sum.Challenges || sum.CookiesMisused != 0 {
		t.Errorf("completed %d of %d, challenges solved %d of %d, cookies misused %d; want all, all (> 0), 0",
			sum.Completed, sum.Jobs, sum.ChallengesSolved, sum.Challenges, sum.CookiesMisused)
	}
	// A visit ends once the clearance cookie is set (CookieSuffices): the
	// site counts the solve when the cookie is first used over HTTP, so a
	// clearance whose proxy failed before that is never counted there; but
	// the site can count no solve the browser did not make.
	solves := sum.ChallengesSolved + sum.PoWSolved
	if sum.SiteSolves == 0 || sum.SiteSolves > solves || sum.I1Violations != 0 || sum.I2Violations != 0 || sum.Bans != 0 {
		t.Errorf("site solves %d, I1 %d, I2 %d, bans %d; want between 1 and the workers' %d solves, 0, 0, 0",
			sum.SiteSolves, sum.I1Violations, sum.I2Violations, sum.Bans, solves)
	}
	// Avito's 439 proof of work is solved over HTTP: its jobs complete and
	// no proxy is quarantined for it.
	if a := sum.Sites["avito"]; a.Jobs == 0 || a.Completed != a.Jobs || sum.PoWSolved == 0 || sum.PoWFailed != 0 ||
		sum.AvitoQuarantines != 0 || sum.Quarantines439 != 0 {
		t.Errorf("avito %d of %d completed, proofs of work %d solved, %d failed, avito quarantines %d, for a 439 %d; want all, > 0, 0, 0, 0",
			a.Completed, a.Jobs, sum.PoWSolved, sum.PoWFailed, sum.AvitoQuarantines, sum.Quarantines439)
	}
	checkBanHandling(t, sum)
	t.Logf("summary: %+v\nprogress:\n%s", sum, out.String())
}

// cancelOnProgress cancels a context at the first progress line: the
// demo is crawling when it is written.
type cancelOnProgress struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	out    strings.Builder
}

func (w *cancelOnProgress) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.Contains(string(p), "jobs ") {
		w.cancel()
	}
	return w.out.Write(p)
}

// TestRunInterrupted: an ended context (Ctrl-C) stops the workers and the
// dashboard, still sums up, says "interrupted" and leaks nothing.
func TestRunInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnProgress{cancel: cancel}
	// With challenges: the interrupt comes in the middle of browser
	// visits, whose pages must send nothing unpaced as they are closed.
	sum, err := Run(ctx, Config{Duration: time.Minute, Mix: testMix, Proxies: 8, Listen: "127.0.0.1:0", Progress: w})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sum.End != EndInterrupted {
		t.Errorf("end = %q, want %q", sum.End, EndInterrupted)
	}
	if !sum.ChallengeMode {
		t.Fatalf("no challenge mode: chromium is needed (.ci/run installs it)")
	}
	if sum.Jobs == 0 || sum.Dashboard == "" {
		t.Errorf("jobs %d, dashboard %q; want the enqueued jobs and the dashboard URL", sum.Jobs, sum.Dashboard)
	}
	if sum.I1Violations != 0 || sum.I2Violations != 0 {
		t.Errorf("violations I1 %d, I2 %d; want 0", sum.I1Violations, sum.I2Violations)
	}
}

// TestListenTakenPort: a taken dashboard port is replaced by a free one on
// the same host, and the move is reported.
func TestListenTakenPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name      string
		addr      string
		wantMoved bool
	}{
		{name: "free port", addr: "127.0.0.1:0", wantMoved: false},
		{name: "taken port", addr: busy.Addr().String(), wantMoved: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, moved, err := listen(tc.addr)
			if err != nil {
				t.Fatalf("listen(%s): %v", tc.addr, err)
			}
			defer l.Close()
			host, _, _ := net.SplitHostPort(l.Addr().String())
			if moved != tc.wantMoved || host != "127.0.0.1" || l.Addr().String() == busy.Addr().String() {
				t.Errorf("listen(%s) = %s, moved %v; want a 127.0.0.1 port other than %s, moved %v",
					tc.addr, l.Addr(), moved, busy.Addr(), tc.wantMoved)
			}
		})
	}
}

// TestConfigRejectsBadInput: values a user can give are checked, naming
// the field.
func TestConfigRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "too few proxies", cfg: Config{Proxies: 5}, want: "proxies 5: want at least 7"},
		{name: "negative duration", cfg: Config{Duration: -time.Second}, want: "duration -1s"},
		{name: "flaky rate above 1", cfg: Config{FlakyRate: 2}, want: "flaky rate 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run(%+v) error = %v, want one containing %q", tc.cfg, err, tc.want)
			}
		})
	}
}

// checkBanHandling: every no-result job completed empty without punishing
// a proxy, and every soft-banned answer was caught (the soft-ban site
// bans at least one IP even in the small mix: its third request with
// items).
func checkBanHandling(t *testing.T, sum *Summary) {
	t.Helper()
	if sum.NoResultJobs != len(testbed.SiteNames) || sum.EmptyJobs != sum.NoResultJobs {
		t.Errorf("%d no-result jobs, %d completed empty; want one per site, all empty", sum.NoResultJobs, sum.EmptyJobs)
	}
	if sum.SoftBannedAnswers == 0 || sum.FalseQuarantines != 0 || sum.MissedSoftBans != 0 {
		t.Errorf("soft-banned answers %d, false quarantines %d, missed soft bans %d; want some, 0, 0",
			sum.SoftBannedAnswers, sum.FalseQuarantines, sum.MissedSoftBans)
	}
	// a witness's control that came back empty is a soft-banned answer
	// its confirmation handled (the witness quarantined), not one of its own
	if sum.Confirmations+sum.WitnessBans < sum.NoResultJobs+sum.SoftBannedAnswers || sum.ConfirmShare <= 0 {
		t.Errorf("%d confirmations, %d witnesses banned on a control (share %v); want at least one per no-result job and soft-banned answer",
			sum.Confirmations, sum.WitnessBans, sum.ConfirmShare)
	}
}

// checkModems: the demo has its two modems, nothing reached one while
// it settled, no change came sooner than the provider allows, no
// rotation failed, and no site started a ban (Avito's rotate_after
// changes a modem's IP first).
func checkModems(t *testing.T, sum *Summary) {
	t.Helper()
	m := sum.Modems
	if m == nil || m.Modems != DefaultModems || m.WhileSettling != 0 || m.TooSoon != 0 || m.Failed != 0 {
		t.Errorf("modems %+v: want %d modems, none while settling, no change too soon, none failed", m, DefaultModems)
	}
	if sum.Bans != 0 {
		t.Errorf("%d bans started by the sites, want 0", sum.Bans)
	}
}

// TestRunThroughModems runs the demo on three farm proxies beside its two
// modems, with more jobs a site at once than the five can serve, so the
// modems carry requests: every job completes with I1, I2 and the bans at
// 0 on the modems' exit IPs, and the summary has the modems' line.
func TestRunThroughModems(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out strings.Builder
	mix := Mix{Searches: 2, Pages: 2, MinMatches: 3, MaxMatches: 6, Products: 3, Empty: 1}
	sum, err := Run(context.Background(), Config{Duration: 40 * time.Second, Mix: mix, Proxies: 3, Dead: -1, Flaky: -1,
		GatewayExits: -1, SoftBans: -1, Progress: &out, NoChallenge: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkModems(t, sum)
	if m := sum.Modems; m == nil || m.Requests == 0 {
		t.Fatalf("modems %+v: want requests through them", m)
	}
	if sum.I1Violations != 0 || sum.I2Violations != 0 || sum.Completed != sum.Jobs {
		t.Errorf("I1 %d, I2 %d, completed %d of %d jobs; want 0, 0, all", sum.I1Violations, sum.I2Violations, sum.Completed, sum.Jobs)
	}
	var text strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "modems: 2 with change links") {
		t.Errorf("summary has no modems line:\n%s", text.String())
	}
	t.Logf("modems %+v\n%s", *sum.Modems, text.String())
}
