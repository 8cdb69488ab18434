package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/proxies"
	"crawlq/schedule"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// residentialWildberries is a worker's configuration on the testbed whose
// wildberries jobs need residential proxies (the farm has datacenter
// ones only) and whose avito jobs need datacenter ones (the built-in
// avito class is residential).
func residentialWildberries(t *testing.T, reg *site.Registry) *site.Registry {
	t.Helper()
	w := reg.Clone()
	err := w.Apply(site.Config{Sites: map[string]site.SiteConfig{
		testbed.SiteWildberries: {Class: string(proxies.Residential)},
		testbed.SiteAvito:       {Class: string(proxies.Datacenter)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestJobClassIsDecidedByTheWorker: a job queued without a class (by an
// enqueuer that knows only the built-in sites, where avito needs
// residential proxies) carries none and runs with its site's class in
// the worker's configuration; a job that names a class, or an old payload
// that carries one, keeps it; a job whose class no proxy of the pool
// serves its site with ends at once, not retried, saying so.
func TestJobClassIsDecidedByTheWorker(t *testing.T) {
	_, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 13})
	worker := residentialWildberries(t, reg)
	runWorker(t, tb, worker)
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	size := testbed.PageSizes[testbed.SiteAvito]
	avito := tasks.Job{Site: testbed.SiteAvito, Kind: "search",
		Request: site.Request{Query: pickQuery(t, tb.Catalog, testbed.SiteAvito, 1, size, 1, size)}}
	product := tb.Catalog.Products(testbed.SiteWildberries)[0].ID
	tests := []struct {
		name      string
		task      func() (*asynq.Task, error)
		payload   string // in the queued payload
		state     asynq.TaskState
		lastError string
	}{
		{name: "no class: the worker's", payload: `"kind":"search"`, state: asynq.TaskStateCompleted,
			task: func() (*asynq.Task, error) { return tasks.NewTask(site.Default(), avito) }},
		{name: "named class kept", payload: `"class":"datacenter"`, state: asynq.TaskStateCompleted,
			task: func() (*asynq.Task, error) {
				return tasks.NewTask(worker, tasks.Job{Site: testbed.SiteWildberries, Kind: "product",
					Request: site.Request{ID: product}, Class: proxies.Datacenter})
			}},
		{name: "old payload's class kept", payload: `"class":"datacenter"`, state: asynq.TaskStateCompleted,
			task: func() (*asynq.Task, error) {
				raw := fmt.Sprintf(`{"site":"wildberries","kind":"product","id":%q,"class":"datacenter","run":"old"}`, product)
				return asynq.NewTask("wildberries:product", []byte(raw), asynq.Queue(testbed.SiteWildberries), asynq.TaskID("old-payload"), asynq.Retention(time.Hour)), nil
			}},
		{name: "no proxy of the class serves the site", payload: `"kind":"product"`, state: asynq.TaskStateArchived,
			lastError: "no residential proxy serves wildberries; the pool has 2 datacenter proxies for it",
			task: func() (*asynq.Task, error) {
				return tasks.NewTask(worker, tasks.Job{Site: testbed.SiteWildberries, Kind: "product", Request: site.Request{ID: product}},
					asynq.TaskID("unserved"))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task, err := tc.task()
			if err != nil {
				t.Fatal(err)
			}
			if p := string(task.Payload()); !strings.Contains(p, tc.payload) || (!strings.Contains(tc.payload, "class") && strings.Contains(p, "class")) {
				t.Fatalf("payload %s; want %s and a class only where the job names one", p, tc.payload)
			}
			info, err := c.Enqueue(task)
			if err != nil {
				t.Fatal(err)
			}
			got := waitTask(t, insp, info.Queue, info.ID, tc.state)
			if got.Retried != 0 || !strings.Contains(got.LastErr, tc.lastError) {
				t.Errorf("%v after %d retries with %q; want no retry and an error saying %q", tc.state, got.Retried, got.LastErr, tc.lastError)
			}
		})
	}
}

// TestScheduleRunsTheTickAfterAConfigurationError: a schedule's run whose
// job ended because no proxy of its class serves the site does not hold
// the schedule: its next tick runs.
func TestScheduleRunsTheTickAfterAConfigurationError(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 17})
	runWorker(t, tb, residentialWildberries(t, reg))
	jobs := []tasks.Job{{Site: testbed.SiteWildberries, Kind: "product",
		Request: site.Request{ID: tb.Catalog.Products(testbed.SiteWildberries)[0].ID}}}
	s, err := schedule.New(site.Default(), "watch", "@every 1m", jobs, func(int) string { return "job" })
	if err != nil {
		t.Fatal(err)
	}
	store := schedule.NewStore(rdb)
	if err := store.Add(ctx, s, false); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	now := time.Now().UTC().Truncate(time.Minute).Add(5 * time.Second)
	tk := &schedule.Ticker{Store: store, Client: asynq.NewClient(asynqOpt(t)), Insp: insp, RDB: rdb,
		Sites: site.Default(), Now: func() time.Time { return now }}
	defer tk.Client.Close()
	first, err := tk.Fire(ctx, "watch")
	if err != nil || first.Outcome != schedule.OutcomeRun || first.Enqueued != 1 {
		t.Fatalf("first tick: %+v, %v; want its job queued", first, err)
	}
	st, err := store.State(ctx, "watch")
	if err != nil || len(st.RunJobs) != 1 {
		t.Fatalf("state after the first tick: %+v, %v", st, err)
	}
	q := st.RunJobs[0]
	if got := waitTask(t, insp, q.Queue, q.ID, asynq.TaskStateArchived); !strings.Contains(got.LastErr, "no residential proxy serves wildberries") {
		t.Fatalf("first tick's job archived with %q, want the class error", got.LastErr)
	}
	now = now.Add(time.Minute)
	next, err := tk.Fire(ctx, "watch")
	if err != nil || next.Outcome != schedule.OutcomeRun || next.Enqueued != 1 {
		t.Fatalf("next tick: %+v, %v; want it run (its job queued), not skipped", next, err)
	}
}
