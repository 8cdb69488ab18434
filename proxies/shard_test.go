package proxies

import (
	"fmt"
	"testing"
)

func TestShardMovesWhenFifthServerJoins(t *testing.T) {
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = fmt.Sprintf("proxy-%d", i)
	}
	four := []string{"s1", "s2", "s3", "s4"}
	five := append(append([]string(nil), four...), "s5")
	tests := []struct {
		name     string
		before   Sharder
		after    Sharder
		min, max float64
	}{
		{"modulo", NewModulo(four), NewModulo(five), 0.7, 1},
		{"consistent ring", NewRing(four, 0), NewRing(five, 0), 0.12, 0.28},
		{"rendezvous", NewRendezvous(four), NewRendezvous(five), 0.15, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			moved := Moved(ids, tt.before, tt.after)
			t.Logf("%s: %.1f%% of %d proxies move when a 5th server joins 4", tt.name, 100*moved, len(ids))
			if moved < tt.min || moved > tt.max {
				t.Errorf("moved %.3f, want in [%.2f, %.2f]", moved, tt.min, tt.max)
			}
		})
	}
}

func TestShardCoversEveryServer(t *testing.T) {
	ps := testProxies(t, 400)
	for _, s := range []Sharder{NewModulo([]string{"a", "b"}), NewRing([]string{"a", "b"}, 0), NewRendezvous([]string{"a", "b"})} {
		got := Shard(ps, s)
		if len(got["a"])+len(got["b"]) != len(ps) || len(got["a"]) < 100 || len(got["b"]) < 100 {
			t.Errorf("%T: shares a=%d b=%d of %d", s, len(got["a"]), len(got["b"]), len(ps))
		}
	}
}

func TestDivideSites(t *testing.T) {
	ps := testProxies(t, 30)
	ps[0].Sites = []string{"ozon"}
	got := DivideSites(ps, []string{"avito", "ozon", "wb"})
	n := 0
	for site, list := range got {
		n += len(list)
		if len(list) == 0 {
			t.Errorf("site %s got no proxies", site)
		}
	}
	if n != len(ps) {
		t.Errorf("divided %d proxies, want %d", n, len(ps))
	}
	if AssignSite(ps[0], []string{"avito", "wb"}) != "ozon" {
		t.Errorf("a proxy's own Sites[0] must win over division")
	}
}
