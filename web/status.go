package web

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/proxies"
)

// Status is one snapshot of the cluster: the Asynq queues, the proxy pool per
// site and the live worker servers. `crawlq status --json` prints it and
// /metrics reports the same numbers.
type Status struct {
	// At is when the snapshot was taken (local clock).
	At      time.Time      `json:"at"`
	Queues  []QueueStatus  `json:"queues"`
	Pool    PoolStatus     `json:"pool"`
	Servers []ServerStatus `json:"servers"`
}

// QueueStatus counts one Asynq queue's tasks by state. Processed and Failed
// are today's counts; the *Total fields count since the queue began.
type QueueStatus struct {
	Queue          string `json:"queue"`
	Size           int    `json:"size"`
	Pending        int    `json:"pending"`
	Active         int    `json:"active"`
	Scheduled      int    `json:"scheduled"`
	Retry          int    `json:"retry"`
	Archived       int    `json:"archived"`
	Completed      int    `json:"completed"`
	Processed      int    `json:"processed"`
	Failed         int    `json:"failed"`
	ProcessedTotal int    `json:"processed_total"`
	FailedTotal    int    `json:"failed_total"`
	Paused         bool   `json:"paused"`
}

// PoolStatus is the proxy pool per site, without per-proxy detail.
type PoolStatus struct {
	// Total is the number of proxies in the pool.
	Total int `json:"total"`
	// Sites maps a site to its ready/leased/cooling/quarantined counts.
	Sites map[string]proxies.SiteStats `json:"sites"`
}

// ServerStatus is one live `crawlq worker` as Asynq sees it.
type ServerStatus struct {
	ID            string         `json:"id"`
	Host          string         `json:"host"`
	PID           int            `json:"pid"`
	Concurrency   int            `json:"concurrency"`
	Queues        map[string]int `json:"queues"`
	Started       time.Time      `json:"started"`
	Status        string         `json:"status"`
	ActiveWorkers int            `json:"active_workers"`
}

// Collect takes a Status snapshot from the Asynq inspector and the broker.
// A nil broker gives an empty pool.
func Collect(ctx context.Context, insp *asynq.Inspector, b proxies.Broker) (*Status, error) {
	st, _, err := collect(ctx, insp, b)
	return st, err
}

// collect is Collect that also returns the broker's full stats (with
// per-proxy counters) for the dashboard.
func collect(ctx context.Context, insp *asynq.Inspector, b proxies.Broker) (*Status, *proxies.PoolStats, error) {
	qs, err := queueStatuses(insp)
	if err != nil {
		return nil, nil, err
	}
	srv, err := serverStatuses(insp)
	if err != nil {
		return nil, nil, err
	}
	ps, err := poolStats(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	st := &Status{At: time.Now(), Queues: qs, Servers: srv,
		Pool: PoolStatus{Total: ps.Total, Sites: ps.Sites}}
	return st, ps, nil
}

// poolStats asks the broker for its stats; no broker means an empty pool.
func poolStats(ctx context.Context, b proxies.Broker) (*proxies.PoolStats, error) {
	if b == nil {
		return &proxies.PoolStats{Sites: map[string]proxies.SiteStats{}}, nil
	}
	ps, err := b.Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("pool stats: %w", err)
	}
	if ps.Sites == nil {
		ps.Sites = map[string]proxies.SiteStats{}
	}
	return ps, nil
}

// queueStatuses lists every Asynq queue, sorted by name.
func queueStatuses(insp *asynq.Inspector) ([]QueueStatus, error) {
	names, err := insp.Queues()
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	sort.Strings(names)
	out := make([]QueueStatus, 0, len(names))
	for _, q := range names {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q, err)
		}
		out = append(out, queueStatus(info))
	}
	return out, nil
}

func queueStatus(i *asynq.QueueInfo) QueueStatus {
	return QueueStatus{
		Queue: i.Queue, Size: i.Size, Pending: i.Pending, Active: i.Active,
		Scheduled: i.Scheduled, Retry: i.Retry, Archived: i.Archived,
		Completed: i.Completed, Processed: i.Processed, Failed: i.Failed,
		ProcessedTotal: i.ProcessedTotal, FailedTotal: i.FailedTotal, Paused: i.Paused,
	}
}

// serverStatuses lists the live Asynq servers, sorted by host then ID.
func serverStatuses(insp *asynq.Inspector) ([]ServerStatus, error) {
	infos, err := insp.Servers()
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	out := make([]ServerStatus, 0, len(infos))
	for _, s := range infos {
		out = append(out, ServerStatus{
			ID: s.ID, Host: s.Host, PID: s.PID, Concurrency: s.Concurrency,
			Queues: s.Queues, Started: s.Started, Status: s.Status,
			ActiveWorkers: len(s.ActiveWorkers),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
