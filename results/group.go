package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RejectedKey counts the stream entries the sink group acknowledged as
// rejected: entries that could not become a row and were kept in the
// sink's rejected table instead. It carries {jobs}: Ack updates it in the
// script that acknowledges them.
const RejectedKey = StreamKey + ":rejected"

// Acked is what Ack acknowledged.
type Acked struct {
	// Entries is every entry acknowledged; Rejected those of them that
	// were rejected.
	Entries, Rejected int64
}

// Ack acknowledges entries (rows written) and rejected (kept as rejected)
// for the sink group in one script, and adds the rejected ones it
// acknowledged to RejectedKey.
func Ack(ctx context.Context, rdb redis.UniversalClient, entries, rejected []string) (Acked, error) {
	if len(entries)+len(rejected) == 0 {
		return Acked{}, nil
	}
	args := make([]any, 0, 2+len(entries)+len(rejected))
	args = append(args, SinkGroup, len(rejected))
	for _, id := range rejected {
		args = append(args, id)
	}
	for _, id := range entries {
		args = append(args, id)
	}
	v, err := ackScript.Run(ctx, rdb, []string{StreamKey, RejectedKey}, args...).Int64Slice()
	if err != nil || len(v) != 2 {
		return Acked{}, fmt.Errorf("acknowledge %d entries of %s: %v", len(entries)+len(rejected), StreamKey, err)
	}
	return Acked{Entries: v[0], Rejected: v[1]}, nil
}

// RemoveIdleConsumers removes the sink group's consumers idle for at
// least idle with nothing pending (sinks that stopped) and returns their
// names. A consumer holding pending entries stays: its
// entries are claimed (XAUTOCLAIM) and it goes at a later start.
func RemoveIdleConsumers(ctx context.Context, rdb redis.UniversalClient, idle time.Duration) ([]string, error) {
	names, err := removeIdleScript.Run(ctx, rdb, []string{StreamKey}, SinkGroup, idle.Milliseconds()).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("remove idle consumers of %s: %w", SinkGroup, err)
	}
	return names, nil
}
