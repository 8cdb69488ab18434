package bench

import (
	"context"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

func TestRunBrokerReportsAllPhases(t *testing.T) {
	rdb := testredis.Client(t, testredis.DBBench)
	res, err := RunBroker(context.Background(), rdb, BrokerOptions{Proxies: 50, Workers: 4, Duration: 200 * time.Millisecond})
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
