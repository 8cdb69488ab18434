package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is a page whose transaction the replicas did not
// acknowledge in time (Sink.WithReplicas): a failover now could lose it
// with its progress, so the job does not count it done; its retry reads
// the progress and writes the page again only if it was lost.
var ErrNotReplicated = errors.New("page write not acknowledged by the replicas")

// defaultReplicaTimeout bounds the WAIT after a page's transaction.
const defaultReplicaTimeout = 250 * time.Millisecond

// WithReplicas makes every WritePage wait (WAIT, on the transaction's own
// connection) until n replicas acknowledged the page, and fail with
// ErrNotReplicated when they did not within timeout (0: 250ms): a page
// the job counts done survives a failover to such a replica (I6). Only on
// a client with connections of its own (one server, Sentinel); on a
// Cluster it has no effect. It returns s.
func (s *Sink) WithReplicas(n int, timeout time.Duration) *Sink {
	if timeout <= 0 {
		timeout = defaultReplicaTimeout
	}
	s.replicas, s.replicaTimeout = n, timeout
	return s
}

// txPipelined runs fn as one transaction, and WAITs for the replicas on
// the same connection when WithReplicas asked for it.
func (s *Sink) txPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	c, ok := s.rdb.(*redis.Client)
	if s.replicas <= 0 || !ok {
		return s.rdb.TxPipelined(ctx, fn)
	}
	conn := c.Conn()
	defer conn.Close()
	cmds, err := conn.TxPipelined(ctx, fn)
	if err != nil {
		return cmds, err
	}
	n, err := conn.Wait(ctx, s.replicas, s.replicaTimeout).Result()
	switch {
	case err != nil:
		err = fmt.Errorf("wait for the replicas: %v: %w", err, ErrNotReplicated)
	case n < int64(s.replicas):
		err = fmt.Errorf("%d of %d replicas: %w", n, s.replicas, ErrNotReplicated)
	}
	return cmds, err
}
