package tasks_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"crawlq/internal/testredis"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestWrongHeadersAreARequestDefect: a site configured to send the
// Wildberries search's headers to every API call (xhr_headers in YAML)
// sends the card API the search's x-queryid and x-userid, which the
// testbed, as the site's page does not send them there, answers 403
// (issue 36.4). Each product job fails at once (no retry) with the
// endpoint and the reason in its error; no proxy is punished; the worker
// warns once, counts every defect, and a search (whose headers are
// right) completes.
func TestWrongHeadersAreARequestDefect(t *testing.T) {
	const wb = testbed.SiteWildberries
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 3, Seed: 5})
	all := []site.Header{{Name: "deviceid", Value: "site_{deviceid}"}, {Name: "x-queryid", Value: "{queryid}"},
		{Name: "x-requested-with", Value: "XMLHttpRequest"}, {Name: "x-spa-version", Value: "13.15.1"}, {Name: "x-userid", Value: "0"}}
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{wb: {XHRHeaders: &all}}}); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	var mu sync.Mutex
	var defects []tasks.DefectStats
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "defects",
		Concurrency: 2, Sites: reg, ShutdownTimeout: time.Second, Logger: zap.New(core),
		OnDefect: func(d tasks.DefectStats) { mu.Lock(); defects = append(defects, d); mu.Unlock() }})
	ps := tb.Catalog.Products(wb)
	jobs := []tasks.Job{
		{Site: wb, Kind: "product", Request: site.Request{ID: ps[0].ID}},
		{Site: wb, Kind: "product", Request: site.Request{ID: ps[1].ID}},
		{Site: wb, Kind: "search", Request: site.Request{Query: "кофе"}, Pages: 1},
	}
	c, infos := enqueueAndWait(t, rdb, reg, jobs)
	if c.Failed != 2 || c.Completed != 1 {
		t.Errorf("counts %+v: want the two product jobs failed, the search completed", c)
	}
	for _, info := range infos[:2] {
		if info.Retried != 0 || !strings.Contains(info.LastErr, "request defect") ||
			!strings.Contains(info.LastErr, "/__internal/u-card/cards/v4/detail (status 403)") {
			t.Errorf("%s: %d retries, error %q: want none and the endpoint with its status", info.ID, info.Retried, info.LastErr)
		}
	}
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[wb]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans, %s (%s): a request defect punished a proxy", p.ID, st.Banned, st.State, st.LastBan)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(defects) != 2 || defects[0].Kind != "product" || defects[0].Reason != "status 403" {
		t.Errorf("defects %+v: want two product ones, status 403", defects)
	}
	warned := logs.FilterMessage("request defect").FilterLevelExact(zapcore.WarnLevel).Len()
	quiet := logs.FilterMessage("request defect").FilterLevelExact(zapcore.DebugLevel).Len()
	if warned != 1 || quiet != 1 {
		t.Errorf("%d warnings and %d debug lines of a request defect, want one of each", warned, quiet)
	}
	if refused := tb.Log.HeaderRefusals(); len(refused) == 0 {
		t.Errorf("the testbed refused no header set")
	}
}
