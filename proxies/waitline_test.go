package proxies

import (
	"context"
	"errors"
	"testing"
	"time"

	"crawlq/internal/testredis"
)

// TestWaitTurnsAreSpacedByThePool: with every proxy of the class leased,
// the jobs turned away get turns one spacing (min_interval over the
// proxies) apart, in the order they asked, and the site's wait line says
// about how many wait and how far ahead the turns go.
func TestWaitTurnsAreSpacedByThePool(t *testing.T) {
	ctx := context.Background()
	b := NewRedisBroker(testredis.Client(t, testredis.DBProxies), Config{Default: SiteConfig{MinInterval: 4 * time.Second}})
	importN(t, b, 2, ImportOptions{Class: Datacenter})
	req := LeaseRequest{Site: "wb", Class: Datacenter, Holder: "h", TTL: time.Minute}
	for range 2 {
		if _, err := b.Lease(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	var turns []Turn
	for range 3 {
		_, err := b.Lease(ctx, req)
		var nr *NotReadyError
		if !errors.As(err, &nr) || !nr.Leased {
			t.Fatalf("lease with every proxy leased: %v; want a NotReadyError saying some are leased", err)
		}
		turn, err := b.Turn(ctx, nr)
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn)
	}
	for i := 1; i < len(turns); i++ {
		if gap := turns[i].At.Sub(turns[i-1].At); gap != 2*time.Second {
			t.Errorf("turn %d comes %s after the one before; want min_interval / 2 proxies = 2s", i, gap)
		}
	}
	lines, err := b.WaitLines(ctx, map[string][]Class{"wb": {Datacenter, Residential}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Site != "wb" || lines[0].Class != Datacenter || lines[0].Waiting < 2 || lines[0].Waiting > 4 {
		t.Errorf("wait lines %+v; want wb datacenter with about 3 waiting", lines)
	}
}
