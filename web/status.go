package web

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hibiken/asynq"

	"crawlq/internal/heartbeat"
	"crawlq/proxies"
	"crawlq/results"
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
	// Schedulers and Sinks are the live `crawlq scheduler` and `crawlq
	// sink` processes, by their heartbeats (JoinHeartbeats); nil if not
	// read, empty when none runs.
	Schedulers []heartbeat.Record `json:"schedulers"`
	Sinks      []heartbeat.Record `json:"sinks"`
	// Results is the results stream's backlog (JoinResults); nil if not read.
	Results *results.Backlog `json:"results,omitempty"`
	// Waits are the sites' wait lines with jobs waiting for a proxy
	// (proxies.RedisBroker.WaitLines).
	Waits []proxies.LineStats `json:"waits,omitempty"`
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
	// Sites maps a site to its ready/leased/cooling/quarantined counts
	// and its cleared proxies.
	Sites map[string]proxies.SiteStats `json:"sites"`
	// Modems are the pool's modem figures, when it has modems.
	Modems *proxies.ModemStats `json:"modems,omitempty"`
	// Limits are the pool's learned limits (min_interval: auto), with
	// their latest changes.
	Limits []proxies.LearnedLimit `json:"limits,omitempty"`
}

// ServerStatus is one live `crawlq worker` as Asynq sees it, joined with
// the worker's own heartbeat (ServerID, Version) when it keeps one.
type ServerStatus struct {
	// ServerID is the worker's --server-id; empty for an Asynq server
	// without a crawlq heartbeat.
	ServerID string `json:"server_id,omitempty"`
	// Version is the crawlq version the worker runs.
	Version string `json:"version,omitempty"`
	// ID is Asynq's own server ID.
	ID            string         `json:"id"`
	Host          string         `json:"host"`
	PID           int            `json:"pid"`
	Concurrency   int            `json:"concurrency"`
	Queues        map[string]int `json:"queues"`
	Started       time.Time      `json:"started"`
	Status        string         `json:"status"`
	ActiveWorkers int            `json:"active_workers"`
	// Paused says why the worker takes no new job; empty while it works.
	Paused string `json:"paused,omitempty"`
}

// Collect takes a Status snapshot from the Asynq inspector and the broker.
// A nil broker gives an empty pool. The pool is counted without reading
// every proxy when the broker can (proxies.RedisBroker.Summary), so a
// status costs the same at 100,000 proxies as at 10.
func Collect(ctx context.Context, insp *asynq.Inspector, b proxies.Broker) (*Status, error) {
	qs, err := queueStatuses(insp)
	if err != nil {
		return nil, err
	}
	srv, err := serverStatuses(insp)
	if err != nil {
		return nil, err
	}
	sum, err := poolSummary(ctx, b)
	if err != nil {
		return nil, err
	}
	return &Status{At: time.Now(), Queues: qs, Servers: srv, Waits: waitLines(ctx, b, sum.Sites),
		Pool: PoolStatus{Total: sum.Total, Sites: sum.Sites, Modems: sum.Modems, Limits: sum.Limits}}, nil
}

// summarizer is a broker that counts its pool without reading it.
type summarizer interface {
	Summary(ctx context.Context) (*proxies.PoolSummary, error)
}

var _ summarizer = (*proxies.RedisBroker)(nil)

// poolSummary counts the pool per site and state: with the broker's
// Summary when it has one, else from its full Stats.
func poolSummary(ctx context.Context, b proxies.Broker) (*proxies.PoolSummary, error) {
	if sb, ok := b.(summarizer); ok {
		sum, err := sb.Summary(ctx)
		if err != nil {
			return nil, fmt.Errorf("pool summary: %w", err)
		}
		return sum, nil
	}
	ps, err := poolStats(ctx, b)
	if err != nil {
		return nil, err
	}
	return &proxies.PoolSummary{At: ps.At, Total: ps.Total, Sites: ps.Sites}, nil
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
