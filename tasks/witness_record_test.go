package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"crawlq/internal/testredis"
)

// TestWitnessRecord: what the witness record says of an IP before its
// empty answer, on real Redis. An IP whose last answer on the site had
// items within WitnessFor is a witness; one whose last answer was empty,
// whose items are older than WitnessFor, or that never answered with
// items is not, while another IP of the site had items; with none, the
// site is cold and any IP counts. The empty answer itself takes the IP
// off the record.
func TestWitnessRecord(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	const site = "wildberries"
	type answer struct {
		ip    string
		at    time.Duration
		items bool
	}
	tests := []struct {
		name    string
		before  []answer
		ip      string
		at      time.Duration
		want    witness
		counts  bool
		another string // another site, whose record must not count
	}{
		{name: "last answer had items", before: []answer{{"10.0.0.1", 0, true}},
			ip: "10.0.0.1", at: time.Minute, want: witness{Items: true}, counts: true},
		{name: "items, then an empty answer",
			before: []answer{{"10.0.0.1", 0, true}, {"10.0.0.2", 0, true}, {"10.0.0.1", time.Second, false}},
			ip:     "10.0.0.1", at: time.Minute, want: witness{}, counts: false},
		{name: "never answered with items, another IP had",
			before: []answer{{"10.0.0.2", 0, true}},
			ip:     "10.0.0.1", at: time.Minute, want: witness{}, counts: false},
		{name: "items older than WitnessFor",
			before: []answer{{"10.0.0.1", 0, true}, {"10.0.0.2", WitnessFor, true}},
			ip:     "10.0.0.1", at: WitnessFor + time.Second, want: witness{}, counts: false},
		{name: "cold site: no IP had items", before: []answer{{"10.0.0.2", 0, false}},
			ip: "10.0.0.1", at: time.Minute, want: witness{Cold: true}, counts: true},
		{name: "cold site: the only items are past WitnessFor", before: []answer{{"10.0.0.2", 0, true}},
			ip: "10.0.0.1", at: WitnessFor + time.Second, want: witness{Cold: true}, counts: true},
		{name: "items on another site do not count here", another: "ozon",
			ip: "10.0.0.1", at: time.Minute, want: witness{Cold: true}, counts: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := testredis.Client(t, testredis.DBTasks)
			if tc.another != "" {
				record(t, rdb, tc.another, tc.ip, t0, true)
				record(t, rdb, tc.another, "10.0.0.2", t0, true)
			}
			for _, a := range tc.before {
				record(t, rdb, site, a.ip, t0.Add(a.at), a.items)
			}
			got, err := answeredEmpty(ctx, rdb, site, tc.ip, t0.Add(tc.at))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || got.counts() != tc.counts {
				t.Errorf("answeredEmpty (-want +got):\n%s counts %v, want %v", diff, got.counts(), tc.counts)
			}
			if again, _ := answeredEmpty(ctx, rdb, site, tc.ip, t0.Add(tc.at)); again.Items {
				t.Error("an IP's empty answer left it a witness")
			}
			if ttl := rdb.PTTL(ctx, witnessKey(site)).Val(); ttl > WitnessFor {
				t.Errorf("record's TTL %s, want at most %s", ttl, WitnessFor)
			}
		})
	}
}

// record writes one answer of ip on site at at into the record, as a
// page's transaction (items) or a Suspect answer (empty) does.
func record(t *testing.T, rdb redis.UniversalClient, site, ip string, at time.Time, items bool) {
	t.Helper()
	ctx := context.Background()
	if !items {
		if _, err := answeredEmpty(ctx, rdb, site, ip, at); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		sawItemsIn(ctx, p, site, ip, at)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
