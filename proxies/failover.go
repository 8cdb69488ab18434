package proxies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Redis replicates asynchronously: a lease written on a master that dies
// before its replica got it is forgotten by the promoted replica, which
// could lease the same (proxy, site) again, even with the same fencing
// token. Two guards, both in Config, keep I1 and I3 across a failover:
//
//   - Replicas: every round trip of the broker's scripts ends with one
//     WAIT; a lease or extend the replicas did not acknowledge is not
//     handed out (ErrNotReplicated), so every lease a holder has is on the
//     replica that takes over.
//   - Epochs: the lease scripts compare the master's replication ID (INFO
//     replication, read inside the script) with the one the pool last
//     saw. A new ID starts a new epoch: fencing tokens jump to epoch*2^32,
//     above every token an earlier master issued (I3), and without
//     Replicas new leases are refused for EpochFence, by which time every
//     lease the new master forgot has expired (I1).

// ErrNotReplicated is a lease or extend that the replicas did not
// acknowledge within Config.ReplicaTimeout: a failover now could forget
// it, so it is not handed out (an extend leaves the lease at its old
// expiry).
var ErrNotReplicated = errors.New("lease write not acknowledged by the replicas")

// Defaults of the failover settings.
const (
	defaultReplicaTimeout = 250 * time.Millisecond
	defaultEpochFence     = 30 * time.Second
)

// fenceArg is ARGV[10] of the lease scripts: "-1" with epochs off, else
// the fence in ms, none when the replicas acknowledge every lease.
func (b *RedisBroker) fenceArg() any {
	switch {
	case !b.cfg.Epochs:
		return "-1"
	case b.cfg.Replicas > 0:
		return int64(0)
	}
	return b.cfg.EpochFence.Milliseconds()
}

// unreplicated gives back a lease the replicas did not acknowledge and
// returns the error for its caller. The release is best effort: if it is
// lost too, the lease frees itself after its TTL (I4).
func (b *RedisBroker) unreplicated(ctx context.Context, l *Lease) error {
	if err := b.Release(context.WithoutCancel(ctx), l, Neutral()); err != nil && !errors.Is(err, ErrStaleLease) {
		b.log.Debug("give back unreplicated lease", zap.String("proxy", l.Proxy.ID), zap.Error(err))
	}
	return fmt.Errorf("lease %s of proxy %s: %w", l.Site, l.Proxy.ID, ErrNotReplicated)
}
