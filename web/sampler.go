package web

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// sampleLoop records the pool's counters every Refresh until ctx ends,
// feeding the success-rate chart.
func (s *Server) sampleLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.Refresh)
	defer t.Stop()
	s.sample(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// sample takes one reading; errors are logged, not fatal.
func (s *Server) sample(ctx context.Context) {
	if s.cfg.Broker == nil {
		return
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.Refresh)
	defer cancel()
	ps, err := poolStats(tctx, s.cfg.Broker)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("web: sample pool", zap.Error(err))
		}
		return
	}
	s.hist.add(ps)
}
