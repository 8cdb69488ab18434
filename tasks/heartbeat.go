package tasks

import (
	"context"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"

	"crawlq/internal/heartbeat"
)

// Heartbeat timing: the record is rewritten every heartbeatEvery and lives
// heartbeatTTL, so a worker that died leaves the lists within 15 s. Until
// the worker has found its Asynq server, it looks every heartbeatSoon.
const (
	heartbeatEvery = 5 * time.Second
	heartbeatTTL   = 15 * time.Second
	heartbeatSoon  = 200 * time.Millisecond
)

// heartbeatLoop keeps the worker's heartbeat record (server ID, host, pid,
// version, start, Asynq server ID) in Redis until ctx ends, then removes
// it. started is when the Asynq server was started.
func (w *Worker) heartbeatLoop(ctx context.Context, started time.Time) {
	host, _ := os.Hostname()
	rec := heartbeat.Record{ServerID: w.cfg.ServerID, Host: host, PID: os.Getpid(),
		Version: heartbeat.Version(), Started: started}
	insp := asynq.NewInspector(w.cfg.Redis)
	defer insp.Close()
	for {
		if rec.AsynqID == "" {
			rec.AsynqID = w.findAsynqID(ctx, insp, rec)
		}
		rec.Paused = w.gate.Reason()
		if err := heartbeat.Write(ctx, w.cfg.RDB, rec, heartbeatTTL); err != nil && ctx.Err() == nil {
			w.cfg.Logger.Debug("heartbeat", zap.Error(err))
		}
		wait := heartbeatEvery
		if rec.AsynqID == "" {
			wait = heartbeatSoon
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if err := heartbeat.Remove(context.WithoutCancel(ctx), w.cfg.RDB, rec.ServerID); err != nil {
				w.cfg.Logger.Debug("heartbeat", zap.Error(err))
			}
			return
		case <-t.C:
		}
	}
}

// findAsynqID picks this worker's Asynq server: same host and pid, not
// claimed by another live worker's record, started closest to rec.Started.
// Empty until Asynq's own heartbeat has run.
func (w *Worker) findAsynqID(ctx context.Context, insp *asynq.Inspector, rec heartbeat.Record) string {
	servers, err := insp.Servers()
	if err != nil {
		return ""
	}
	claimed := map[string]bool{}
	if recs, err := heartbeat.List(ctx, w.cfg.RDB); err == nil {
		for _, r := range recs {
			if r.ServerID != rec.ServerID {
				claimed[r.AsynqID] = true
			}
		}
	}
	best, bestGap := "", time.Duration(-1)
	for _, s := range servers {
		if s.Host != rec.Host || s.PID != rec.PID || claimed[s.ID] {
			continue
		}
		gap := s.Started.Sub(rec.Started).Abs()
		if bestGap < 0 || gap < bestGap {
			best, bestGap = s.ID, gap
		}
	}
	return best
}
