package schedule

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/tasks/site"
)

// Config configures Run.
type Config struct {
	// RDB is the queue's Redis: schedules, Asynq's queues, follow-ups.
	// Required.
	RDB redis.UniversalClient
	// Sites is the registry jobs are built with. Default site.Default().
	Sites *site.Registry
	// SyncInterval is how often the schedules are read again, so a change
	// applies within it. Default 5s.
	SyncInterval time.Duration
	// Clock is the scheduler's time. Default the system clock.
	Clock Clock
	// Logger logs each firing. Default zap.NewNop().
	Logger *zap.Logger
	// Names, if set, limits the scheduler to these schedules (a bench's
	// own); default all.
	Names []string
	// OnFire, if set, is called after each firing (tests, bench).
	OnFire func(Fired, error)
}

// DefaultSyncInterval is Config.SyncInterval's default.
const DefaultSyncInterval = 5 * time.Second

// Clock is the scheduler's time: the time now, and a channel that
// receives once a duration has passed. Tests inject their own.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// systemClock is Config.Clock's default.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Run runs the active schedules until ctx ends: it reads them every
// SyncInterval, waits for the earliest Next of them and fires it
// (Ticker.Fire) at that time, so a tick's jobs are queued at the NEXT
// `schedule list` showed. Firings still going when ctx ends are carried
// to their end before Run returns.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if cfg.RDB == nil {
		return fmt.Errorf("schedule: config.RDB is required")
	}
	insp := asynq.NewInspectorFromRedisClient(cfg.RDB)
	defer insp.Close()
	store := NewStore(cfg.RDB)
	tk := &Ticker{Store: store, Client: asynq.NewClientFromRedisClient(cfg.RDB), Insp: insp, RDB: cfg.RDB,
		Sites: cfg.Sites, Now: cfg.Clock.Now}
	(&loop{cfg: cfg, store: store, tk: tk}).run(ctx)
	return nil
}

func (cfg Config) withDefaults() Config {
	if cfg.Sites == nil {
		cfg.Sites = site.Default()
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = DefaultSyncInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return cfg
}

func (cfg Config) wants(name string) bool {
	return len(cfg.Names) == 0 || slices.Contains(cfg.Names, name)
}

// fireTimeout bounds one firing.
const fireTimeout = 30 * time.Second

// fire runs one firing of the schedule name and logs it.
func (cfg Config) fire(ctx context.Context, tk *Ticker, name string) {
	// A firing that started is carried to its end even when the scheduler
	// stops meanwhile (Run waits for it): cut short, a tick could be
	// decided and its jobs queued but not counted, and the cut would be
	// reported as the firing's failure.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fireTimeout)
	defer cancel()
	f, err := tk.Fire(fctx, name)
	log := cfg.Logger.With(zap.String("schedule", name), zap.Time("tick", f.Tick), zap.String("outcome", f.Outcome))
	switch {
	case err != nil:
		log.Error("schedule tick failed", zap.Error(err))
	case f.Outcome == OutcomeSkip && f.Decided:
		log.Warn("tick skipped: the previous run is still going")
	case f.Outcome == OutcomeRun:
		log.Info("tick", zap.Bool("decided", f.Decided), zap.Int("enqueued", f.Enqueued), zap.Int("refused", f.Refused))
	default:
		log.Debug("tick")
	}
	if cfg.OnFire != nil {
		cfg.OnFire(f, err)
	}
}
