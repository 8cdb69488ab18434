package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/testredis"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestJobWaitingForAProxyHandsItsSlotBack: a worker of one slot, whose
// Avito proxies are all leased elsewhere, runs its Wildberries jobs while
// the Avito jobs queued before them wait: each Avito attempt hands the
// slot back, is neither failed nor counted as a retry, and says it waits
// for a proxy; once the proxies come free the Avito jobs complete, still
// with no retry used.
func TestJobWaitingForAProxyHandsItsSlotBack(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 2, Seed: 41})
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteAvito: {MinInterval: "1s"}}}); err != nil {
		t.Fatal(err) // the testbed's pace: the waiting jobs' turns come a second apart
	}
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	var held []*proxies.Lease
	for range 2 {
		l, err := b.Lease(ctx, proxies.LeaseRequest{Site: testbed.SiteAvito, Class: proxies.Datacenter, Holder: "elsewhere", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "one-slot",
		Concurrency: 1, Sites: reg, ShutdownTimeout: time.Second, SlotWait: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	runUntilEnd(t, w)
	avito := enqueueOnePage(t, reg, tb, testbed.SiteAvito, 3)
	wb := enqueueOnePage(t, reg, tb, testbed.SiteWildberries, 3)
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	for _, id := range wb {
		waitTask(t, insp, testbed.SiteWildberries, id, asynq.TaskStateCompleted)
	}
	for _, id := range avito {
		info, err := insp.GetTaskInfo(testbed.SiteAvito, id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State == asynq.TaskStateCompleted || info.State == asynq.TaskStateArchived || info.Retried != 0 {
			t.Errorf("avito job %s %v after %d retries while its proxies were held; want waiting, no retry", id, info.State, info.Retried)
		}
	}
	if w.HandedBack() == 0 {
		t.Error("no attempt handed its slot back")
	}
	for _, l := range held {
		if err := b.Release(ctx, l, proxies.Neutral()); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range avito {
		if info := waitTask(t, insp, testbed.SiteAvito, id, asynq.TaskStateCompleted); info.Retried != 0 {
			t.Errorf("avito job %s completed after %d retries; waiting should use none", id, info.Retried)
		}
	}
}

// enqueueOnePage queues n one-page product (item) jobs of the site.
func enqueueOnePage(t *testing.T, reg *site.Registry, tb *testbed.Testbed, siteName string, n int) []string {
	t.Helper()
	c := asynq.NewClient(asynqOpt(t))
	defer c.Close()
	kind := "product"
	if siteName == testbed.SiteAvito {
		kind = "item"
	}
	var ids []string
	for i, p := range tb.Catalog.Products(siteName)[:n] {
		task, err := tasks.NewTask(reg, tasks.Job{Site: siteName, Kind: kind, Request: site.Request{URL: tb.SiteURL(siteName) + p.URL}},
			asynq.TaskID(fmt.Sprintf("%s-%d", siteName, i)), asynq.Retention(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Enqueue(task)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	return ids
}

// TestWaitsAreNoFailures: every way a job waits for a proxy hands its
// slot back for the time it names, and is no failure; other errors are.
func TestWaitsAreNoFailures(t *testing.T) {
	nr := &proxies.NotReadyError{Site: "avito", Class: proxies.Residential, Wait: 3 * time.Second, Leased: true}
	tests := []struct {
		name    string
		err     error
		waiting bool
		after   time.Duration
	}{
		{name: "no proxy soon", err: fmt.Errorf("lease: %w", &sessions.WaitError{Site: "avito", Wait: 4 * time.Second, Err: nr}), waiting: true, after: 4 * time.Second},
		{name: "own proxy cools", err: nr, waiting: true, after: 3 * time.Second},
		{name: "modem rotates", err: &sessions.EndedError{Err: sessions.ErrModemRotating}, waiting: true, after: time.Second},
		{name: "turn now", err: &sessions.WaitError{Err: nr}, waiting: true, after: 100 * time.Millisecond},
		{name: "ban", err: &tasks.RetryError{After: time.Second, Err: errors.New("blocked")}},
		{name: "plain", err: errors.New("connection refused")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, waiting := tasks.HandedBack(tc.err)
			if waiting != tc.waiting || tasks.IsFailure(tc.err) == tc.waiting || (waiting && d != tc.after) {
				t.Errorf("HandedBack = %s, %v; IsFailure %v; want waiting %v for %s", d, waiting, tasks.IsFailure(tc.err), tc.waiting, tc.after)
			}
			if waiting && tasks.RetryDelay(5, tc.err, nil) != tc.after {
				t.Errorf("RetryDelay = %s, want the wait %s", tasks.RetryDelay(5, tc.err, nil), tc.after)
			}
		})
	}
	if !strings.Contains((&sessions.WaitError{Site: "avito", Class: proxies.Residential, Err: nr}).Error(), "waiting for a residential proxy for avito") {
		t.Error("a WaitError does not say what it waits for")
	}
}

// TestSlotsFollowTheProxies (issue 40.2): a worker of eight slots, with
// Wildberries' four proxies free and Avito's one usable proxy (the three
// others banned) leased elsewhere, holds none of its slots waiting for
// Avito, though a job may wait in its slot for a minute: the site can use
// no more than its one lease. Its Avito jobs hand their slots back at
// once, no retry used, and the Wildberries jobs take the slots. Once the
// proxy comes free, no more than one Avito job waits in its slot at a
// time and every Avito job completes, still with no retry used.
func TestSlotsFollowTheProxies(t *testing.T) {
	ctx := context.Background()
	rdb, tb, reg := crawlWorld(t, testbed.Config{Proxies: 4, Seed: 43})
	if err := reg.Apply(site.Config{Sites: map[string]site.SiteConfig{testbed.SiteAvito: {MinInterval: "1s"}}}); err != nil {
		t.Fatal(err)
	}
	b := proxies.NewRedisBroker(rdb, tasks.BrokerConfig(reg, nil))
	var held *proxies.Lease
	for i := range 4 {
		l, err := b.Lease(ctx, proxies.LeaseRequest{Site: testbed.SiteAvito, Class: proxies.Datacenter, Holder: "elsewhere", TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			held = l
			continue
		}
		if err := b.Release(ctx, l, proxies.Banned("test")); err != nil {
			t.Fatal(err)
		}
	}
	w := tasks.NewWorker(tasks.WorkerConfig{Redis: asynqOpt(t), RDB: testredis.NewClient(t, testredis.DBTasks), ServerID: "eight-slots",
		Concurrency: 8, Sites: reg, ShutdownTimeout: time.Second, SlotWait: time.Minute, PollInterval: 100 * time.Millisecond})
	runUntilEnd(t, w)
	avito := enqueueOnePage(t, reg, tb, testbed.SiteAvito, 8)
	wb := enqueueOnePage(t, reg, tb, testbed.SiteWildberries, 8)
	insp := asynq.NewInspector(asynqOpt(t))
	defer insp.Close()
	for _, id := range wb {
		waitTask(t, insp, testbed.SiteWildberries, id, asynq.TaskStateCompleted)
	}
	if n := w.Sessions().PeakWaiting()[testbed.SiteAvito]; n != 0 {
		t.Errorf("%d Avito jobs waited in their slots at once while its one usable proxy was leased; want 0", n)
	}
	if err := b.Release(ctx, held, proxies.Neutral()); err != nil {
		t.Fatal(err)
	}
	for _, id := range avito {
		if info := waitTask(t, insp, testbed.SiteAvito, id, asynq.TaskStateCompleted); info.Retried != 0 {
			t.Errorf("avito job %s completed after %d retries; waiting should use none", id, info.Retried)
		}
	}
	if n := w.Sessions().PeakWaiting()[testbed.SiteAvito]; n > 1 {
		t.Errorf("%d Avito jobs waited in their slots at once for its one proxy; want at most 1", n)
	}
}
