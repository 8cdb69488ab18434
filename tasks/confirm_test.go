package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/proxies"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestNoResultSearchCompletesEmpty: a search that matches nothing, on every
// site, through the farm: its ambiguous answer is asked once more from a
// second proxy, which agrees, so the job completes with 0 items and no
// follow-ups, Wait counts it as empty, and no proxy is quarantined.
func TestNoResultSearchCompletesEmpty(t *testing.T) {
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 4, Seed: 5})
	runWorker(t, tb, reg)
	var jobs []tasks.Job
	for _, name := range testbed.SiteNames {
		q := tb.Catalog.NoResultQueries(name, 1)[0]
		jobs = append(jobs, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q}, Pages: 2, Follow: true})
	}
	c, infos := enqueueAndWait(t, rdb, reg, jobs)
	if c.Completed != len(jobs) || c.Empty != len(jobs) || c.FollowUps != 0 || c.Failed != 0 {
		t.Errorf("counts %+v: want %d completed, all empty, no follow-ups", c, len(jobs))
	}
	if got, want := c.CompletedText(), "3 completed, 3 of them empty"; got != want {
		t.Errorf("CompletedText %q, want %q", got, want)
	}
	for _, info := range infos {
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil {
			t.Fatalf("%s result: %v", info.ID, err)
		}
		if s.Items != 0 || !s.Empty || s.Confirmations != 1 || s.SoftBans != 0 || s.Verdicts["suspect"] != 2 {
			t.Errorf("%s summary %+v: want 0 items, empty, one confirmation (two suspect answers), no soft ban", s.Site, s)
		}
	}
	stats := poolStats(t, rdb, reg)
	for _, p := range stats.Proxies {
		for name, st := range p.Sites {
			if st.Banned != 0 || st.State == "quarantined" {
				t.Errorf("proxy %s on %s: %d bans, state %s (%s): a true empty answer punished a proxy", p.ID, name, st.Banned, st.State, st.LastBan)
			}
		}
	}
	for _, e := range tb.Log.Entries() {
		if e.Meant != testbed.MeantEmpty {
			t.Errorf("site %s answered %s %s meaning %q, want empty", e.Site, e.Path, e.IP, e.Meant)
		}
	}
}

// TestSoftBannedProxyQuarantinedAfterSecondIP: a soft-banned proxy answers
// a search that has items with the site's empty shape (Wildberries'
// query-resolution object without products; Ozon's page API "nothing
// found" widget); the job's
// second proxy (held by the test until the first answered, so the first
// lease is held meanwhile) answers with the items: the first proxy is
// quarantined with the rule that fired, the second released OK, and the
// job completes with the second answer's items.
func TestSoftBannedProxyQuarantinedAfterSecondIP(t *testing.T) {
	for _, tt := range []struct {
		site, rule string
	}{
		{testbed.SiteWildberries, "empty list shardKey on page 1"},
		{testbed.SiteOzon, "empty list widgetStates.searchResultsError-* on page 1"},
	} {
		t.Run(tt.site, func(t *testing.T) { softBannedProxyQuarantined(t, tt.site, tt.rule) })
	}
}

// softBannedProxyQuarantined runs TestSoftBannedProxyQuarantinedAfterSecondIP
// on siteName, whose empty answer fires rule.
func softBannedProxyQuarantined(t *testing.T, siteName, rule string) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 5})
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	held, err := b.Lease(ctx, proxies.LeaseRequest{Site: siteName, Class: proxies.Datacenter, Holder: "test", Task: "hold", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	banned := otherFarmIP(t, tb, held.Proxy)
	tb.SoftBan(siteName, banned, 0)
	runWorker(t, tb, reg)
	q := findQuery(tb.Catalog, siteName, 3, min(50, testbed.PageSizes[siteName]))
	if q == "" {
		t.Fatal("no query with 3..50 matches on one page")
	}
	go func() { // release the second proxy once the banned one has answered
		waitLog(t, tb, func(e testbed.Entry) bool { return e.Meant == testbed.MeantBanned })
		if st := proxySite(t, rdb, reg, banned, siteName); st.State != "leased" {
			t.Errorf("soft-banned proxy is %s while its answer is confirmed, want still leased", st.State)
		}
		_ = b.Release(context.WithoutCancel(ctx), held, proxies.Neutral())
	}()
	c, infos := enqueueAndWait(t, rdb, reg, []tasks.Job{{Site: siteName, Kind: "search", Request: site.Request{Query: q}}})
	if c.Completed != 1 || c.Empty != 0 {
		t.Fatalf("counts %+v: want one completed, not empty", c)
	}
	var s tasks.Summary
	if err := json.Unmarshal(infos[0].Result, &s); err != nil {
		t.Fatal(err)
	}
	if want := len(tb.Catalog.Matches(siteName, q)); s.Items != want || s.SoftBans != 1 || s.Confirmations != 1 {
		t.Errorf("summary %+v: want %d items from the second proxy, one soft ban", s, want)
	}
	first := proxySite(t, rdb, reg, banned, siteName)
	if first.State != "quarantined" || first.Banned != 1 || !strings.Contains(first.LastBan, rule) {
		t.Errorf("soft-banned proxy: state %s, %d bans, reason %q; want quarantined for %q", first.State, first.Banned, first.LastBan, rule)
	}
	second := proxySite(t, rdb, reg, held.Proxy.Host, siteName)
	if second.State == "quarantined" || second.Banned != 0 || second.OK == 0 {
		t.Errorf("second proxy: state %s, %d bans, %d ok; want released OK", second.State, second.Banned, second.OK)
	}
	var meant []string
	for _, e := range tb.Log.Entries() {
		meant = append(meant, e.IP+" "+string(e.Meant))
	}
	if want := []string{banned + " banned", held.Proxy.Host + " items"}; strings.Join(meant, ",") != strings.Join(want, ",") {
		t.Errorf("site log %v, want %v", meant, want)
	}
}

// enqueueAndWait queues jobs, waits for the batch as `enqueue --wait`
// does and returns the counts and the jobs' task infos.
func enqueueAndWait(t *testing.T, rdb *redis.Client, reg *site.Registry, jobs []tasks.Job) (tasks.Counts, []*asynq.TaskInfo) {
	t.Helper()
	ctx := context.Background()
	client := asynq.NewClient(asynqOpt(t))
	defer client.Close()
	enq := &tasks.Enqueuer{Client: client, Sites: reg}
	ts, err := enq.Build(jobs, func(i int) string { return "job" })
	if err != nil {
		t.Fatal(err)
	}
	bt, err := enq.Enqueue(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := tasks.Wait(wctx, insp, rdb, bt.All(), 50*time.Millisecond, func(tasks.Counts) {})
	if err != nil {
		for _, q := range bt.All() {
			if info, ierr := insp.GetTaskInfo(q.Queue, q.ID); ierr == nil && info.LastErr != "" {
				t.Logf("%s %s: %s", q.Queue, info.State, info.LastErr)
			}
		}
		t.Fatalf("wait: %v (counts %+v)", err, c)
	}
	var infos []*asynq.TaskInfo
	for _, q := range bt.All() {
		info, err := insp.GetTaskInfo(q.Queue, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	return c, infos
}

func poolStats(t *testing.T, rdb *redis.Client, reg *site.Registry) *proxies.PoolStats {
	t.Helper()
	st, err := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil)).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// proxySite is the pool stats of the proxy on host for a site.
func proxySite(t *testing.T, rdb *redis.Client, reg *site.Registry, host, siteName string) proxies.ProxySiteStats {
	t.Helper()
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if strings.Contains(p.Masked, "//"+host+":") || strings.Contains(p.Masked, "@"+host+":") {
			return p.Sites[siteName]
		}
	}
	t.Fatalf("no proxy on %s", host)
	return proxies.ProxySiteStats{}
}

// otherFarmIP is the IP of the farm proxy that is not p.
func otherFarmIP(t *testing.T, tb *testbed.Testbed, p proxies.Proxy) string {
	t.Helper()
	for _, fp := range tb.Farm.Proxies() {
		if fp.IP != p.Host {
			return fp.IP
		}
	}
	t.Fatal("no other farm proxy")
	return ""
}

// waitLog polls the testbed's log until an entry matches (with a deadline).
func waitLog(t *testing.T, tb *testbed.Testbed, match func(testbed.Entry) bool) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range tb.Log.Entries() {
			if match(e) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the testbed never logged the awaited answer")
}
