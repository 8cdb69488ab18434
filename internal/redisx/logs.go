package redisx

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// RouteLogs sends go-redis's own log lines (its pool's dial failures,
// reconnects) to log at debug level, instead of straight to stderr where
// they would precede crawlq's one clear error. A nil log silences them.
func RouteLogs(log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	redis.SetLogger(zapPrintf{log.Named("go-redis").WithOptions(zap.WithCaller(false))})
}

// zapPrintf is go-redis's Logging interface on a zap logger.
type zapPrintf struct{ log *zap.Logger }

func (z zapPrintf) Printf(_ context.Context, format string, v ...any) {
	if ce := z.log.Check(zap.DebugLevel, ""); ce != nil {
		ce.Message = fmt.Sprintf(format, v...)
		ce.Write()
	}
}
