package tasks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestOzonUnknownAnswerFailsWithItKept: Ozon's page API answers every IP
// with 200 and JSON that is not Ozon's shape (no widgetStates; or
// widgetStates with no tile and no "nothing found" widget). It is no
// evidence of a ban: Suspect, asked again from a second proxy, which gets
// the same. The parser does not know it, so the job is archived at once,
// naming the reason and where the answer's copy is kept; nothing is
// written (no empty result) and no proxy is quarantined.
func TestOzonUnknownAnswerFailsWithItKept(t *testing.T) {
	for name, body := range map[string]string{
		"no widgetStates": `{"data":{"items":null},"trace":"0af3"}`,
		"no tile widget":  `{"widgetStates":{"webAdvertBanner-3390283-default-1":"{\"banner\":{\"id\":7}}"}}`,
	} {
		t.Run(name, func(t *testing.T) { unknownOzonAnswer(t, body) })
	}
}

// unknownOzonAnswer runs TestOzonUnknownAnswerFailsWithItKept with an
// Ozon whose every answer is body.
func unknownOzonAnswer(t *testing.T, body string) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	rdb, reg := ozonAt(t, srv.URL)
	info := enqueueArchived(t, reg, tasks.Job{Site: testbed.SiteOzon, Kind: "search", Request: site.Request{Query: "кофе"}})
	key := tasks.AnswerKey(info.ID)
	if !strings.Contains(info.LastErr, "answer not of the site's own shape") || !strings.Contains(info.LastErr, "kept at "+key) {
		t.Errorf("last error %q: want the unknown shape and where its answer is kept", info.LastErr)
	}
	var s tasks.Summary
	if err := json.Unmarshal(info.Result, &s); err != nil {
		t.Fatal(err)
	}
	if s.Empty || s.Items != 0 || s.Answer != key || s.Confirmations != 1 || s.Verdicts["suspect"] != 2 || s.SoftBans != 0 {
		t.Errorf("summary %+v: want not empty, the answer at %s, two suspect answers agreeing", s, key)
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("Ozon was asked %d times, want twice (the answer, a second opinion)", n)
	}
	a, err := tasks.LoadAnswer(context.Background(), rdb, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Body) != body || a.Status != http.StatusOK || !strings.Contains(a.URL, "entrypoint-api.bx") || !strings.Contains(a.Reason, "ozon") {
		t.Errorf("kept answer %+v: want the page API's 200 answer with the parser's reason", a)
	}
	assertNoResults(t, rdb)
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[testbed.SiteOzon]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans, state %s: an unknown answer is no ban", p.ID, st.Banned, st.State)
		}
	}
}

// ozonAt starts a farm whose Ozon is served at ozonURL, and a worker.
func ozonAt(t *testing.T, ozonURL string) (*redis.Client, *site.Registry) {
	t.Helper()
	rdb := testredis.Client(t, testredis.DBTasks)
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	urls := tb.Sites()
	urls[testbed.SiteOzon] = ozonURL
	reg, err := testbedRegistry(urls)
	if err != nil {
		t.Fatal(err)
	}
	importFarm(t, rdb, tb, reg)
	runWorker(t, tb, reg)
	return rdb, reg
}

// enqueueArchived queues job and waits until it is archived.
func enqueueArchived(t *testing.T, reg *site.Registry, job tasks.Job) *asynq.TaskInfo {
	t.Helper()
	return enqueueUntil(t, reg, job, asynq.TaskStateArchived)
}

// enqueueUntil queues job and waits until its task reaches state.
func enqueueUntil(t *testing.T, reg *site.Registry, job tasks.Job, state asynq.TaskState) *asynq.TaskInfo {
	t.Helper()
	task, err := tasks.NewTask(reg, job)
	if err != nil {
		t.Fatal(err)
	}
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	info, err := c.Enqueue(task)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	return waitTask(t, insp, info.Queue, info.ID, state)
}
