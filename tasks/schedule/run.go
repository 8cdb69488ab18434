package schedule

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"crawlq/tasks/site"
)

// Config configures Run.
type Config struct {
	// RDB is the queue's Redis: schedules, Asynq's queues, follow-ups.
	// Required.
	RDB redis.UniversalClient
	// Asynq is the same Redis for Asynq's scheduler, which opens (and at
	// shutdown closes) its own connections. Required.
	Asynq asynq.RedisConnOpt
	// Sites is the registry jobs are built with. Default site.Default().
	Sites *site.Registry
	// SyncInterval is how often the schedules are read again, so a change
	// applies within it. Default 5s.
	SyncInterval time.Duration
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

// Run runs the schedules until ctx ends: an Asynq PeriodicTaskManager
// whose config provider reads the store, and whose PreEnqueueFunc fires
// the schedule (Ticker.Fire) at each firing, at the scheduled time.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if cfg.RDB == nil || cfg.Asynq == nil {
		return fmt.Errorf("schedule: config.RDB and config.Asynq are required")
	}
	client := asynq.NewClientFromRedisClient(cfg.RDB)
	insp := asynq.NewInspectorFromRedisClient(cfg.RDB)
	defer insp.Close()
	store := NewStore(cfg.RDB)
	tk := &Ticker{Store: store, Client: client, Insp: insp, RDB: cfg.RDB, Sites: cfg.Sites}
	var firing sync.WaitGroup
	mgr, err := asynq.NewPeriodicTaskManager(asynq.PeriodicTaskManagerOpts{
		PeriodicTaskConfigProvider: &Provider{Store: store, Names: cfg.Names},
		RedisConnOpt:               cfg.Asynq,
		SyncInterval:               cfg.SyncInterval,
		SchedulerOpts: &asynq.SchedulerOpts{
			Logger:   cfg.Logger.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel)).Sugar(),
			LogLevel: asynq.WarnLevel,
			PreEnqueueFunc: func(t *asynq.Task, _ []asynq.Option) {
				firing.Add(1)
				defer firing.Done()
				cfg.fire(ctx, tk, t)
			},
			PostEnqueueFunc: func(info *asynq.TaskInfo, err error) { dropMarker(insp, info, err) },
		},
	})
	if err != nil {
		return err
	}
	if err := mgr.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	mgr.Shutdown()
	firing.Wait()
	return nil
}

func (cfg Config) withDefaults() Config {
	if cfg.Sites == nil {
		cfg.Sites = site.Default()
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = DefaultSyncInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return cfg
}

// fireTimeout bounds one firing.
const fireTimeout = 30 * time.Second

// fire runs one firing of the marker t's schedule and logs it.
func (cfg Config) fire(ctx context.Context, tk *Ticker, t *asynq.Task) {
	name, ok := scheduleOf(t)
	if !ok || ctx.Err() != nil {
		return
	}
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

// dropMarker deletes the marker task the scheduler just queued: its work
// is done, and nothing consumes the tick queue. (It shows in Asynq's
// scheduler history all the same.)
func dropMarker(insp *asynq.Inspector, info *asynq.TaskInfo, err error) {
	if err == nil && info != nil && info.Type == TypeTick {
		_ = insp.DeleteTask(info.Queue, info.ID)
	}
}
