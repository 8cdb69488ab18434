package demo

import (
	"context"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"

	"crawlq/results"
	"crawlq/results/item"
	"crawlq/results/pgsink"
	"crawlq/testbed"
)

// snapshot is the demo's state at one moment: per site and in total.
type snapshot struct {
	Sites map[string]SiteSummary
	Total SiteSummary
	// Retrying are jobs waiting for their next attempt.
	Retrying int
}

// done reports whether every enqueued job has finished, well or not.
func (s snapshot) done() bool { return s.Total.Jobs > 0 && s.Total.Unfinished == 0 }

// snapshot counts jobs from the site queues, distinct items from the
// results stream, and pages and bans from the testbed's request log.
func (c *cluster) snapshot(ctx context.Context) (snapshot, error) {
	s := snapshot{Sites: map[string]SiteSummary{}}
	for name, q := range c.queues() {
		info, err := c.insp.GetQueueInfo(q)
		if err != nil {
			return s, fmt.Errorf("queue %s: %w", q, err)
		}
		s.Sites[name] = jobCounts(info)
		s.Retrying += info.Retry
	}
	tallyLog(s.Sites, c.tb.Log.Entries())
	if err := c.countItems(ctx, s.Sites); err != nil {
		return s, err
	}
	for _, st := range s.Sites {
		s.Total.add(st)
	}
	return s, nil
}

// failures reads the last error of every failed (archived) job.
func (c *cluster) failures() (map[string]string, error) {
	out := map[string]string{}
	for _, q := range c.queues() {
		tasks, err := c.insp.ListArchivedTasks(q, asynq.PageSize(1000))
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q, err)
		}
		for _, t := range tasks {
			out[t.ID] = t.LastErr
		}
	}
	return out, nil
}

// jobCounts reads a queue's job states.
func jobCounts(info *asynq.QueueInfo) SiteSummary {
	unfinished := info.Pending + info.Active + info.Scheduled + info.Retry + info.Aggregating
	return SiteSummary{Jobs: unfinished + info.Completed + info.Archived, Completed: info.Completed,
		Failed: info.Archived, Unfinished: unfinished, FailedAttempts: info.FailedTotal}
}

// tallyLog counts, per site, the pages served (OK requests), the bans the
// site started and the requests it refused.
func tallyLog(sites map[string]SiteSummary, entries []testbed.Entry) {
	for _, e := range entries {
		st, ok := sites[e.Site]
		if !ok {
			continue
		}
		if e.Verdict == testbed.VerdictOK {
			st.Pages++
		}
		if e.Verdict.StartsBan() {
			st.Bans++
		}
		if e.Verdict.Blocked() {
			st.Blocked++
		}
		if e.Verdict == testbed.VerdictFingerprint {
			st.FingerprintRefusals++
		}
		sites[e.Site] = st
	}
}

// countItems counts the distinct items (by site and ID) in the results
// stream, and with a sink in PostgreSQL too (read after the stream, so an
// entry the sink stored and trimmed meanwhile is found there): an item
// seen on a search page and on its own page counts once.
func (c *cluster) countItems(ctx context.Context, sites map[string]SiteSummary) error {
	items, err := results.Read(ctx, c.conn.Client, "")
	if err != nil {
		return fmt.Errorf("count items: %w", err)
	}
	stored, err := c.storedItems(ctx)
	if err != nil {
		return fmt.Errorf("count items: %w", err)
	}
	seen := map[[2]string]bool{}
	for _, it := range append(items, stored...) {
		st, ok := sites[it.Site]
		if !ok || seen[[2]string{it.Site, it.ID}] {
			continue
		}
		seen[[2]string{it.Site, it.ID}] = true
		st.Items++
		sites[it.Site] = st
	}
	return nil
}

// storedItems are the items the demo's sink stored (none without one, or
// before its tables exist).
func (c *cluster) storedItems(ctx context.Context) ([]item.Item, error) {
	if c.postgres == "" {
		return nil, nil
	}
	conn, err := pgsink.Connect(ctx, c.postgres)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT site, id FROM items")
	if err != nil {
		return nil, nil // the sink has not created its tables yet
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (item.Item, error) {
		var it item.Item
		return it, r.Scan(&it.Site, &it.ID)
	})
}
