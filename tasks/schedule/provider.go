package schedule

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/hibiken/asynq"
)

// TypeTick is the type of the marker task Asynq's scheduler queues at
// each firing of a schedule; the firing's work is done just before, in
// the scheduler's PreEnqueueFunc (see Run).
const TypeTick = "schedule:tick"

// TickQueue is the queue of the marker tasks; Run deletes each marker as
// soon as it is queued, so the queue stays empty.
const TickQueue = "schedule"

// tickPayload is a marker task's payload.
type tickPayload struct {
	Schedule string `json:"schedule"`
}

// Provider is Asynq's PeriodicTaskConfigProvider over the store: one
// config per active schedule, so the PeriodicTaskManager registers what
// was added or resumed and unregisters what was removed or paused at its
// next sync.
type Provider struct {
	Store *Store
	// Timeout bounds one read of the schedules; default 10s.
	Timeout time.Duration
	// Names, if set, limits the configs to these schedules.
	Names []string
}

var _ asynq.PeriodicTaskConfigProvider = (*Provider)(nil)

// GetConfigs reads the schedules.
func (p *Provider) GetConfigs() ([]*asynq.PeriodicTaskConfig, error) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	all, err := p.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*asynq.PeriodicTaskConfig
	for _, s := range all {
		if s.Paused || !p.wants(s.Name) {
			continue
		}
		if _, err := s.Spec(); err != nil {
			continue // added by a newer crawlq, or edited by hand: Fire refuses it too
		}
		b, _ := json.Marshal(tickPayload{Schedule: s.Name})
		out = append(out, &asynq.PeriodicTaskConfig{Cronspec: s.Cron, Task: asynq.NewTask(TypeTick, b),
			Opts: []asynq.Option{asynq.Queue(TickQueue), asynq.MaxRetry(0)}})
	}
	return out, nil
}

// scheduleOf reads a marker task's schedule name.
func scheduleOf(t *asynq.Task) (string, bool) {
	var p tickPayload
	if t.Type() != TypeTick || json.Unmarshal(t.Payload(), &p) != nil || p.Schedule == "" {
		return "", false
	}
	return p.Schedule, true
}

func (p *Provider) wants(name string) bool {
	return len(p.Names) == 0 || slices.Contains(p.Names, name)
}
