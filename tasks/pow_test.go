package tasks_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"crawlq/internal/testredis"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// powRecorder keeps the proofs of work a worker reported (OnPoW).
type powRecorder struct {
	mu  sync.Mutex
	got []tasks.PoWStats
}

func (p *powRecorder) add(s tasks.PoWStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, s)
}

func (p *powRecorder) all() []tasks.PoWStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]tasks.PoWStats(nil), p.got...)
}

// TestAvitoProofOfWorkSolvedOverHTTP: from a clean start (no cookies, no
// clearance), Avito answers every new visitor 439 with its proof of work
// (testbed, as captured on 2026-08-27). A worker without a browser solves
// it over HTTP in the job's session, through its proxy, and gets the
// data: every job completes with items. Each exit IP solves once; the
// later jobs on that IP start with its kept clearance and meet no
// challenge; no clearance is shown from another IP; no proxy is
// quarantined for a 439; politeness holds; each solve is reported.
func TestAvitoProofOfWorkSolvedOverHTTP(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true, Farm: testbed.FarmConfig{Auth: true}})
	paceAvitoAtItsLimit(t, tb, reg)
	rec := &powRecorder{}
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "test-worker",
		Concurrency: 2, Sites: reg, ShutdownTimeout: time.Second, OnPoW: rec.add})
	var jobs []tasks.Job
	for _, q := range avitoQueries(t, tb.Catalog, 4) {
		jobs = append(jobs, tasks.Job{Site: testbed.SiteAvito, Kind: "search", Request: site.Request{Query: q}})
	}
	jobs[3].Kind = "search-api"
	c, infos := enqueueAndWait(t, rdb, reg, jobs)
	if c.Completed != len(jobs) {
		t.Fatalf("counts %+v: want every Avito job completed", c)
	}
	solved := 0
	for _, info := range infos {
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil {
			t.Fatal(err)
		}
		if s.Items == 0 || s.Challenges != 0 || s.ProofsOfWork > 1 {
			t.Errorf("summary %+v: want items, no browser visit, at most one proof of work", s)
		}
		solved += s.ProofsOfWork
	}
	ips := checkPoWPerIP(t, tb)
	pows := rec.all()
	if solved != len(ips) || len(pows) != len(ips) {
		t.Errorf("%d proofs of work in the summaries, %d reported, over %d exit IPs: want one per IP", solved, len(pows), len(ips))
	}
	for _, p := range pows {
		if !p.Solved || p.Site != testbed.SiteAvito || p.Took <= 0 {
			t.Errorf("reported %+v: want an Avito solve, timed", p)
		}
	}
	if got := tb.Log.Challenges(); got.Served != len(ips) || got.Solved != len(ips) || got.Misused != 0 {
		t.Errorf("site challenges %+v over %d IPs: want one 439 and one solve per IP, no clearance misused", got, len(ips))
	}
	if rep := tb.Check(); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[testbed.SiteAvito]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans (%s), state %s: a 439 proof of work is not a ban", p.ID, st.Banned, st.LastBan, st.State)
		}
	}
}

// TestConfirmationSolvesTheWitnesssProofOfWork: a soft-banned Avito
// answer is asked again from a second proxy, which meets the proof of
// work as every new visitor does: it is solved over HTTP in the
// witness's session (no browser), the witness's answer with items
// contradicts the soft ban, and only the soft-banned proxy is banned.
func TestConfirmationSolvesTheWitnesssProofOfWork(t *testing.T) {
	rules := testbed.DefaultRules()[testbed.SiteAvito]
	rules.SoftBan = &testbed.SoftBan{Every: 1, Max: 1, Gap: time.Minute} // the first answer with items is a soft ban
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5, Challenge: true,
		Sites: map[string]testbed.SiteRules{testbed.SiteAvito: rules}})
	paceAvitoAtItsLimit(t, tb, reg)
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "test-worker",
		Concurrency: 1, Sites: reg, ShutdownTimeout: time.Second})
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: testbed.SiteAvito, Kind: "search",
		Request: site.Request{Query: avitoQueries(t, tb.Catalog, 1)[0]}}})
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	if c.Completed != 1 || s.Items == 0 || s.SoftBans != 1 || s.Confirmations != 1 || s.ProofsOfWork != 2 || s.Challenges != 0 {
		t.Fatalf("counts %+v, summary %+v: want items, one confirmation contradicting the soft ban, two proofs of work (the job's and the witness's), no browser", c, s)
	}
	if ips := checkPoWPerIP(t, tb); len(ips) != 2 {
		t.Errorf("proofs of work from %v: want one from each proxy", ips)
	}
	var banned int64
	for _, p := range poolStats(t, rdb, reg).Proxies {
		banned += p.Sites[testbed.SiteAvito].Banned
	}
	if banned != 1 {
		t.Errorf("%d proxies banned on avito; want the soft-banned one", banned)
	}
}

// paceAvitoAtItsLimit paces the testbed's Avito a fifth above its per-IP
// limit (the built-in 3 s would only slow the test).
func paceAvitoAtItsLimit(t *testing.T, tb *testbed.Testbed, reg *site.Registry) {
	t.Helper()
	limit := tb.Rules()[testbed.SiteAvito].MinInterval
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteAvito: {BaseURL: tb.Sites()[testbed.SiteAvito],
		Class: "datacenter", MinInterval: (limit + limit/5).String()}}}); err != nil {
		t.Fatal(err)
	}
}

// checkPoWPerIP checks each IP's requests to Avito: the 439, the work
// asked, the nonce verified, then pages only, the first with the fresh
// clearance; it returns the IPs seen.
func checkPoWPerIP(t *testing.T, tb *testbed.Testbed) map[string]bool {
	t.Helper()
	byIP := map[string][]string{}
	for _, e := range tb.Log.Entries() {
		if e.Site == testbed.SiteAvito {
			path, _, _ := strings.Cut(e.Path, "?")
			byIP[e.IP] = append(byIP[e.IP], path+" "+string(e.Verdict)+" "+e.Challenge)
		}
	}
	ips := map[string]bool{}
	for ip, seen := range byIP {
		ips[ip] = true
		ok := len(seen) >= 4 && strings.HasSuffix(seen[0], "challenge "+testbed.ChallengeServed) &&
			seen[1] == testbed.AvitoPoWGetPath+" pow " && seen[2] == testbed.AvitoPoWVerifyPath+" pow " &&
			strings.HasSuffix(seen[3], " "+testbed.ChallengeSolved)
		for _, s := range seen[min(4, len(seen)):] {
			ok = ok && strings.HasSuffix(s, " ok ")
		}
		if !ok {
			t.Errorf("%s: %q; want the 439, the work, the verify, then pages, the first on the new clearance", ip, seen)
		}
		t.Logf("%s: %q", ip, seen)
	}
	return ips
}

// avitoQueries are n one-word queries with results on the testbed's
// Avito.
func avitoQueries(t *testing.T, c *testbed.Catalog, n int) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, p := range c.Products(testbed.SiteAvito) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if len(out) < n && !seen[w] && len([]rune(w)) > 3 && c.Pages(testbed.SiteAvito, w) >= 1 {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	if len(out) < n {
		t.Fatalf("only %d queries with results on avito", len(out))
	}
	return out
}
