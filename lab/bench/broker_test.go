package bench

import (
	"context"
	"testing"
	"time"

	"crawlq/internal/redisx"
	"crawlq/internal/testredis"
)

func TestRunBrokerReportsAllPhases(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBBench)
	target, err := redisx.ParseURL(testredis.URL(t, testredis.DBBench))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunBroker(context.Background(), target, BrokerOptions{Proxies: 50, Workers: 4, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Crawlq.Cycles == 0 || res.Naive.Cycles == 0 || res.Floor.Cycles == 0 {
		t.Fatalf("a phase made no cycles: %+v", res)
	}
	if res.DoubleLeases != 0 {
		t.Fatalf("double leases: %d", res.DoubleLeases)
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("%d benchmark keys left behind", n)
	}
}

// TestTrackerCountsOverlaps checks the double-lease tracker itself: a key
// taken while another holder has it is one double; taking it again after
// it was given back is not.
func TestTrackerCountsOverlaps(t *testing.T) {
	var tr tracker
	tr.take("p1")
	tr.take("p2")
	tr.give("p2")
	tr.take("p2")
	if n := tr.doubles.Load(); n != 0 {
		t.Fatalf("sequential leases counted as %d doubles", n)
	}
	tr.take("p1") // p1 is still held
	if n := tr.doubles.Load(); n != 1 {
		t.Fatalf("overlapping lease counted as %d doubles, want 1", n)
	}
}
