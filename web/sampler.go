package web

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// sampleLoop rebuilds the pool view every Refresh until ctx ends, feeding
// the proxy table, the counters and the charts. A big pool whose read
// takes longer is read less often: at least three times the last read's
// duration passes between two, so the dashboard spends at most a third of
// its time reading the pool.
func (s *Server) sampleLoop(ctx context.Context) {
	for {
		wait := s.cfg.Refresh
		if v := s.sample(ctx); v != nil {
			wait = s.views.period(v.Took)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// sample takes one reading; errors are logged, not fatal.
func (s *Server) sample(ctx context.Context) *poolView {
	v, err := s.views.refresh(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("web: read pool", zap.Error(err))
		}
		return nil
	}
	return v
}

// buildView reads the whole pool and indexes it; every new view is added
// to the charts' history.
func (s *Server) buildView(ctx context.Context) (*poolView, error) {
	start := time.Now()
	ps, err := poolStats(ctx, s.cfg.Broker)
	if err != nil {
		return nil, err
	}
	v := newView(ps, 0, s.cfg.MetricsPerProxy)
	v.Took = time.Since(start)
	s.hist.add(v)
	return v, nil
}
