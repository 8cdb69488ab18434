package tasks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/internal/testredis"
	"crawlq/results"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// wallWorld is a farm whose Wildberries answers every IP, every API call
// and the home page with its anti-bot wall, with status 200.
func wallWorld(t *testing.T) (*redis.Client, *testbed.Testbed, *site.Registry) {
	t.Helper()
	return crawlWorld(t, testbed.Config{Proxies: 3, Seed: 5, Sites: map[string]testbed.SiteRules{
		testbed.SiteWildberries: {Challenge: &testbed.ChallengeRule{WallStatus: http.StatusOK}}}})
}

// wallJobs are a search and a product job of Wildberries (the APIs the
// wall stands in front of; catalog.wb.ru is not walled in the testbed).
func wallJobs(tb *testbed.Testbed) []tasks.Job {
	p := tb.Catalog.Products(testbed.SiteWildberries)[0]
	return []tasks.Job{
		{Site: testbed.SiteWildberries, Kind: "search", Request: site.Request{Query: strings.Fields(p.Title)[0]}},
		{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: p.ID}},
	}
}

// enqueueRetrying queues jobs and waits until each has failed an attempt.
func enqueueRetrying(t *testing.T, reg *site.Registry, jobs []tasks.Job) []*asynq.TaskInfo {
	t.Helper()
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	var out []*asynq.TaskInfo
	for _, j := range jobs {
		task, err := tasks.NewTask(reg, j)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Enqueue(task)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, waitTask(t, insp, info.Queue, info.ID, asynq.TaskStateRetry))
	}
	return out
}

// TestWallOnEveryIPIsNoEmptyResult: every IP gets Wildberries' wall with
// status 200, and the worker has no browser: each job (search, product)
// fails its attempt as a challenge, no job writes a page or an
// empty result, and no proxy is banned for it (I7).
func TestWallOnEveryIPIsNoEmptyResult(t *testing.T) {
	rdb, tb, reg := wallWorld(t)
	runWorker(t, tb, reg)
	for _, info := range enqueueRetrying(t, reg, wallJobs(tb)) {
		if !strings.Contains(info.LastErr, `behind a JavaScript challenge (challenge marker "\"challenge is required\"")`) {
			t.Errorf("%s: last error %q, want the challenge", info.ID, info.LastErr)
		}
		var s tasks.Summary
		if err := json.Unmarshal(info.Result, &s); err != nil {
			t.Fatalf("%s result: %v", info.ID, err)
		}
		if s.Empty || s.Pages != 0 || s.Verdicts["suspect"] != 0 || s.Verdicts["ok"] != 0 {
			t.Errorf("%s summary %+v: want no page, not empty, no suspect or ok verdict", info.ID, s)
		}
	}
	assertNoResults(t, rdb)
	for _, p := range poolStats(t, rdb, reg).Proxies {
		if st := p.Sites[testbed.SiteWildberries]; st.Banned != 0 || st.State == "quarantined" {
			t.Errorf("proxy %s: %d bans, state %s: the wall is a challenge, not a ban", p.ID, st.Banned, st.State)
		}
	}
}

func assertNoResults(t *testing.T, rdb *redis.Client) {
	t.Helper()
	if n, err := rdb.XLen(context.Background(), results.StreamKey).Result(); err != nil || n != 0 {
		t.Errorf("results stream holds %d entries (%v), want none", n, err)
	}
}

// TestUnknownShapeFailsWithTheAnswerKept: with rules that do not know the
// wall (no challenge markers, no expected content), the wall's JSON comes
// to the parser as an OK answer; the parser does not recognize it, so
// the attempt fails naming the reason and the key where the answer is
// kept, the job's result points at it, and no result is written.
func TestUnknownShapeFailsWithTheAnswerKept(t *testing.T) {
	rdb, tb, reg := wallWorld(t)
	rules := detect.Builtin()
	rules.Sites[testbed.SiteWildberries] = detect.Site{Default: detect.Rule{Replace: true}}
	serve(t, tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks),
		ServerID: "test-worker", Concurrency: 2, Sites: reg, Rules: &rules})
	infos := enqueueRetrying(t, reg, wallJobs(tb)[:1])
	info := infos[0]
	key := tasks.AnswerKey(info.ID)
	if !strings.Contains(info.LastErr, "answer not of the site's own shape") || !strings.Contains(info.LastErr, "kept at "+key) {
		t.Errorf("last error %q: want the unknown shape and where its answer is kept", info.LastErr)
	}
	var s tasks.Summary
	if err := json.Unmarshal(info.Result, &s); err != nil || s.Answer != key || s.Empty {
		t.Errorf("summary %+v (%v): want answer %s, not empty", s, err, key)
	}
	a, err := tasks.LoadAnswer(context.Background(), rdb, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"challenge is required"`) || !strings.Contains(a.URL, "/u-search/") || a.Reason == "" {
		t.Errorf("kept answer %+v: want the wall's 200 JSON of the search URL with a reason", a)
	}
	if ttl := rdb.TTL(context.Background(), key).Val(); ttl <= 0 || ttl > tasks.AnswerTTL {
		t.Errorf("kept answer TTL %v, want within %v", ttl, tasks.AnswerTTL)
	}
	assertNoResults(t, rdb)
}
