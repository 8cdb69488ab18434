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
// empty answer, on real Redis. An IP whose last answer on the site within
// WitnessFor was an empty one nothing vouched for is no witness; one
// whose last answer had items, was vouched for, is older than
// WitnessFor, or that the record does not know (on this site) counts.
// The empty answer itself makes the IP unvouched.
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
			ip:     "10.0.0.1", at: time.Minute, want: witness{Unvouched: true}, counts: false},
		{name: "an empty answer, then items",
			before: []answer{{"10.0.0.1", 0, false}, {"10.0.0.1", time.Second, true}},
			ip:     "10.0.0.1", at: time.Minute, want: witness{Items: true}, counts: true},
		{name: "never answered the site", before: []answer{{"10.0.0.2", 0, true}, {"10.0.0.3", 0, false}},
			ip: "10.0.0.1", at: time.Minute, want: witness{}, counts: true},
		{name: "an empty answer older than WitnessFor", before: []answer{{"10.0.0.1", 0, false}},
			ip: "10.0.0.1", at: WitnessFor + time.Second, want: witness{}, counts: true},
		{name: "items older than WitnessFor", before: []answer{{"10.0.0.1", 0, true}},
			ip: "10.0.0.1", at: WitnessFor + time.Second, want: witness{}, counts: true},
		{name: "an empty answer on another site does not count here", another: "ozon",
			ip: "10.0.0.1", at: time.Minute, want: witness{}, counts: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := testredis.Client(t, testredis.DBTasks)
			if tc.another != "" {
				record(t, rdb, tc.another, tc.ip, t0, false)
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
			if again, _ := answeredEmpty(ctx, rdb, site, tc.ip, t0.Add(tc.at)); again.Items || again.counts() {
				t.Errorf("after an IP's empty answer: %+v, want unvouched", again)
			}
			for _, k := range []string{witnessKey(site), unvouchedKey(site)} {
				if ttl := rdb.PTTL(ctx, k).Val(); ttl > WitnessFor {
					t.Errorf("%s's TTL %s, want at most %s", k, ttl, WitnessFor)
				}
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

// TestAwaitVouch: a confirmation whose second IP is no witness waits for
// that IP's own pending empty answer to be found true. A vouch at or
// after the wait's start ends the wait with true, also one made while it
// waits; an older record (before the IP's empty answer) does not count,
// and the wait ends at its bound with false; vouch makes every IP it
// names a witness.
func TestAwaitVouch(t *testing.T) {
	rdb := testredis.NewClient(t, testredis.DBTasks)
	ctx := context.Background()
	site, ip := "wildberries", "10.0.0.9"
	t0 := time.UnixMilli(1_800_000_000_000)
	if err := vouch(ctx, rdb, site, t0.Add(-time.Second), ip); err != nil {
		t.Fatal(err)
	}
	if ok, err := awaitVouch(ctx, rdb, site, ip, t0, 3*vouchPoll); ok || err != nil {
		t.Errorf("a record older than the wait's start: %v, %v; want false at the bound", ok, err)
	}
	done := make(chan bool, 1)
	go func() {
		ok, err := awaitVouch(ctx, rdb, site, ip, t0, time.Minute)
		if err != nil {
			t.Error(err)
		}
		done <- ok
	}()
	if err := vouch(ctx, rdb, site, t0, ip, "10.0.0.10"); err != nil {
		t.Fatal(err)
	}
	if !<-done {
		t.Error("a vouch made during the wait: false, want true")
	}
	if _, err := answeredEmpty(ctx, rdb, site, "10.0.0.10", t0); err != nil {
		t.Fatal(err)
	}
	if err := vouch(ctx, rdb, site, t0, "10.0.0.10"); err != nil {
		t.Fatal(err)
	}
	if w, err := answeredEmpty(ctx, rdb, site, "10.0.0.10", t0.Add(time.Second)); err != nil || !w.Items || !w.counts() {
		t.Errorf("an IP vouched for after its empty answer: %+v, %v; want a witness", w, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := awaitVouch(cctx, rdb, site, "10.0.0.11", t0, time.Minute); err == nil {
		t.Error("a cancelled wait: nil error, want the context's")
	}
}
