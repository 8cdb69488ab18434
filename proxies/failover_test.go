package proxies

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/redisproc"
	"crawlq/internal/testredis"
)

// TestFailoverLosesALeaseWriteButNoHolder loses a lease write in a real
// Sentinel failover: the replica's link to the master is cut and the
// replica put to sleep (DEBUG SLEEP, long enough that the lease and the
// kill come first even on a loaded machine), a lease is written on the
// master alone, and the master is killed (SIGKILL) before the replica
// could get it; the sentinels promote the replica, which never saw the
// lease. Then:
//
//   - with Replicas (WAIT), that lease was never handed out
//     (ErrNotReplicated), and after the failover leases come at once;
//   - with epochs alone, the lease was handed out and forgotten: the new
//     master refuses new leases until it has expired (no second holder,
//     I1), and the next token is above it (no repeated token, I3).
func TestFailoverLosesALeaseWriteButNoHolder(t *testing.T) {
	ctx := context.Background()
	g, rdb := testredis.SentinelClient(t, 0)
	const ttl = 10 * time.Second
	var clk clock
	run := time.Now().UnixNano()
	waited := NewRedisBroker(rdb, clk.config(Config{Pool: fmt.Sprint("fo-wait-", run), Default: noGap,
		Replicas: 1, ReplicaTimeout: 300 * time.Millisecond, Epochs: true}))
	fenced := NewRedisBroker(rdb, clk.config(Config{Pool: fmt.Sprint("fo-fence-", run), Default: noGap,
		Epochs: true, EpochFence: ttl}))
	first := map[*RedisBroker]*Lease{}
	for _, b := range []*RedisBroker{waited, fenced} {
		importN(t, b, 1, ImportOptions{})
		l, err := b.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h0", Task: "t0", TTL: ttl}) // the pool takes the master's epoch
		if err != nil {
			t.Fatalf("lease before the failover: %v", err)
		}
		if err := b.Release(ctx, l, OK(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		first[b] = l
	}
	master, err := g.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	woke, err := g.CutOffReplica(ctx, 2500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}

	// the lease write the failover loses
	if _, err := waited.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h1", Task: "t1", TTL: ttl}); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("lease with the replica cut off: %v, want ErrNotReplicated", err)
	}
	lost, err := fenced.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h1", Task: "t1", TTL: ttl})
	if err != nil {
		t.Fatalf("lease without WAIT: %v", err)
	}
	master.Kill()
	<-woke
	waitFailover(t, g, master.Addr)

	// the promoted replica never saw the lease: the write is lost
	if _, err := eventually(t, func() (string, error) {
		return rdb.HGet(ctx, fenced.k.leases("s"), lost.Proxy.ID).Result()
	}); !errors.Is(err, redis.Nil) {
		t.Fatalf("the new master knows the lease (err %v): the scenario did not lose the write", err)
	}
	// epochs: no second holder while the forgotten lease may be live
	_, err = eventually(t, func() (*Lease, error) {
		return fenced.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h2", Task: "t2", TTL: ttl})
	})
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Until.Before(lost.Expires) {
		t.Fatalf("lease right after the failover: %v, want refused until the lost lease (expiring %s) has expired", err, lost.Expires)
	}
	clk.advance(ttl)
	next, err := fenced.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h2", Task: "t2", TTL: ttl})
	if err != nil {
		t.Fatalf("lease after the fence: %v", err)
	}
	if next.NotBefore.Before(lost.Expires) || next.Token <= lost.Token {
		t.Errorf("next lease from %s token %d; the lost one expires %s with token %d: want no overlap and a higher token",
			next.NotBefore, next.Token, lost.Expires, lost.Token)
	}
	// WAIT: nothing unacknowledged was handed out, so no fence; once the
	// group has a replica again, leases come at once with higher tokens
	if err := g.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	// (a client of the same pool whose WAIT has time for a replica on a
	// loaded machine: the 300ms above only has to outlast none)
	healed := NewRedisBroker(rdb, clk.config(Config{Pool: fmt.Sprint("fo-wait-", run), Default: noGap,
		Replicas: 1, ReplicaTimeout: 5 * time.Second, Epochs: true}))
	l, err := healed.Lease(ctx, LeaseRequest{Site: "s", Class: Datacenter, Holder: "h3", Task: "t3", TTL: ttl})
	if err != nil {
		t.Fatalf("lease with WAIT after the failover: %v", err)
	}
	if l.Token <= first[waited].Token {
		t.Errorf("token %d after the failover, %d before: want higher", l.Token, first[waited].Token)
	}
}

// waitFailover polls the sentinels until they name a master other than old.
func waitFailover(t *testing.T, g *redisproc.SentinelGroup, old string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if a, err := g.MasterAddr(context.Background()); err == nil && a != old {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no failover from %s within 30s", old)
}

// eventually retries f while the client reconnects to the new master
// (connection errors), for up to 10s.
func eventually[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := f()
		var nr *NotReadyError
		if err == nil || errors.Is(err, redis.Nil) || errors.As(err, &nr) || errors.Is(err, ErrStaleLease) || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
