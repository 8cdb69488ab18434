package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/internal/mask/masktest"
	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// gatewayWorld is a testbed whose only proxy is a gateway of exits exit
// IPs in front of a strict Wildberries (two requests of one IP within 200 ms
// ban it for the rest of the run), and a registry pacing Wildberries at
// 250 ms a proxy.
func gatewayWorld(t *testing.T, exits int) (*redis.Client, *testbed.Testbed, *site.Registry) {
	t.Helper()
	rdb := testredis.Client(t, testredis.DBTasks)
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 1, Seed: 11,
		Sites: map[string]testbed.SiteRules{testbed.SiteWildberries: {MinInterval: 200 * time.Millisecond,
			Punishment: testbed.TooMany429, Strict: true}},
		Gateway: &testbed.GatewayConfig{Exits: exits, User: "brd-customer-c1-zone-res", Password: masktest.GatewayPassword, Seed: 11}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	reg, err := testbedRegistry(tb.Sites())
	if err != nil {
		t.Fatal(err)
	}
	err = reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteWildberries: {MinInterval: "250ms"}}})
	if err != nil {
		t.Fatal(err)
	}
	return rdb, tb, reg
}

// importList imports a proxy list given as text.
func importList(t *testing.T, rdb redis.UniversalClient, reg *site.Registry, list string) {
	t.Helper()
	ps, err := proxies.ParseReader(strings.NewReader(list), "gateway.txt")
	if err != nil {
		t.Fatal(err)
	}
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	if _, err := b.Import(context.Background(), ps, proxies.ImportOptions{Class: proxies.Datacenter}); err != nil {
		t.Fatal(err)
	}
}

// gatewayWorkers runs two in-process workers of one cluster on the
// gateway; their session managers' exit figures are summed by counts.
func gatewayWorkers(t *testing.T, tb *testbed.Testbed, reg *site.Registry) (counts func() sessions.ExitCounts) {
	t.Helper()
	ws := probingWorkers(t, tb, tasks.WorkerConfig{Concurrency: 12, Sites: reg}, "gw-a", "gw-b")
	return func() sessions.ExitCounts {
		var sum sessions.ExitCounts
		for _, w := range ws {
			c := w.Sessions().ExitCounts()
			sum.Probes, sum.Rerolls, sum.Waits, sum.Changes = sum.Probes+c.Probes, sum.Rerolls+c.Rerolls, sum.Waits+c.Waits, sum.Changes+c.Changes
		}
		return sum
	}
}

// probingWorkers runs in-process workers of one cluster, one per id,
// configured as cfg plus the test's Redis and the testbed's IP echo as
// their exit probe, until the test ends.
func probingWorkers(t *testing.T, tb *testbed.Testbed, cfg tasks.WorkerConfig, ids ...string) []*tasks.Worker {
	t.Helper()
	var ws []*tasks.Worker
	for _, id := range ids {
		c := cfg
		c.Redis, c.RDB, c.ServerID = asynqOpt(t), testredis.NewClient(t, testredis.DBTasks), id
		c.ShutdownTimeout, c.ExitProbe, c.PollInterval = time.Second, fetcher.ExitProbe{URL: tb.EchoURL()}, testPoll
		if c.Logger == nil {
			c.Logger = zap.New(masktest.Core(t)) // checked for the planted secrets, not printed
		}
		w := tasks.NewWorker(c)
		ws = append(ws, w)
		runUntilEnd(t, w)
	}
	return ws
}

// productJobs are n one-page Wildberries product jobs of the catalog.
func productJobs(tb *testbed.Testbed, n int) []tasks.Job {
	var jobs []tasks.Job
	for _, p := range tb.Catalog.Products(testbed.SiteWildberries)[:n] {
		jobs = append(jobs, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}})
	}
	return jobs
}

// TestGatewayKeepsI1AndI2OnTheExitIP: a gateway of 8 exit IPs with 200
// session ids crawled by two workers of 12 slots (collisions on held
// exits all but certain: the first sessions draw their exits at once,
// three an exit; the broker paces slots by their exits only once it
// knows them):
// the site's log shows no two requests of one IP in flight at once or
// within its 200 ms, and no ban, because crawlq holds each exit IP
// (re-rolling a session id that lands on a held one). A gateway of 40
// exits imported as 200 plain lines, as it would be without gateway
// support, breaks both.
func TestGatewayKeepsI1AndI2OnTheExitIP(t *testing.T) {
	t.Run("gateway", func(t *testing.T) {
		rdb, tb, reg := gatewayWorld(t, 8)
		importList(t, rdb, reg, tb.GatewayLine(200))
		counts := gatewayWorkers(t, tb, reg)
		c, _ := enqueueAndWait(t, rdb, reg, productJobs(tb, 120))
		if c.Completed != c.Total || c.Total != 120 {
			t.Errorf("counts %+v, want all 120 completed", c)
		}
		r := tb.Check()
		bans := banned(tb)
		ec := counts()
		st := tb.Gateway.Stats()
		t.Logf("%d site requests from %d exits; gateway: %d sessions, %d collisions; crawlq: %d probes, %d re-rolls, %d waits",
			len(siteEntries(tb)), st.Exits, st.Sessions, st.Collisions, ec.Probes, ec.Rerolls, ec.Waits)
		if !r.OK() || bans != 0 {
			t.Errorf("through the gateway: I1 %d, I2 %d violations, %d bans: %v", r.I1Violations, r.I2Violations, bans, r.Details)
		}
		if st.Collisions == 0 || ec.Rerolls+ec.Waits == 0 {
			t.Errorf("no session landed on a held exit (gateway collisions %d, re-rolls %d, waits %d): the test proves nothing", st.Collisions, ec.Rerolls, ec.Waits)
		}
	})
	t.Run("as 200 plain lines", func(t *testing.T) {
		rdb, tb, reg := gatewayWorld(t, 40)
		var lines []string
		for i := range 200 {
			lines = append(lines, strings.Replace(tb.GatewayLine(1), "{session}", fmt.Sprint("line", i), 1))
		}
		for i, l := range lines { // each line a plain proxy: its session id fixed, no gateway options
			lines[i] = strings.Fields(l)[0]
		}
		importList(t, rdb, reg, strings.Join(lines, "\n"))
		gatewayWorkers(t, tb, reg)
		client := asynq.NewClient(asynqOpt(t))
		defer client.Close()
		enq := &tasks.Enqueuer{Client: client, Sites: reg}
		ts, err := enq.Build(productJobs(tb, 240), func(int) string { return "plain" })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := enq.Enqueue(context.Background(), ts); err != nil {
			t.Fatal(err)
		}
		broken := func() bool {
			r := tb.Check()
			return r.I1Violations+r.I2Violations > 0 && banned(tb) > 0
		}
		for deadline := time.Now().Add(time.Minute); !broken(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("200 plain lines over 40 exits: no I1/I2 violation and ban within a minute: %+v", tb.Check())
			}
		}
	})
}

// siteEntries are the Wildberries requests of the site's log.
func siteEntries(tb *testbed.Testbed) []testbed.Entry {
	var out []testbed.Entry
	for _, e := range tb.Log.Entries() {
		if e.Site == testbed.SiteWildberries && e.Verdict != testbed.VerdictExempt {
			out = append(out, e)
		}
	}
	return out
}

// banned counts the gateway's exit IPs Wildberries has banned.
func banned(tb *testbed.Testbed) int {
	n := 0
	for _, ip := range tb.Gateway.ExitIPs() {
		if tb.Banned(testbed.SiteWildberries, ip) {
			n++
		}
	}
	return n
}
