package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/internal/redisx"
	"crawlq/proxies"
)

func TestFailoverGuardsPerTopology(t *testing.T) {
	tests := []struct {
		name, url, mode string
		want            proxies.Config
	}{
		{name: "sentinel auto", url: "redis-sentinel://s:26379/m", mode: "auto",
			want: proxies.Config{Replicas: 1, Epochs: true, EpochFence: time.Minute}},
		{name: "cluster auto", url: "redis-cluster://n:7000", mode: "auto",
			want: proxies.Config{Epochs: true, EpochFence: time.Minute}},
		{name: "one server auto", url: "redis://h:6379/0", mode: "auto", want: proxies.Config{}},
		{name: "sentinel epochs", url: "redis-sentinel://s:26379/m", mode: "epochs",
			want: proxies.Config{Epochs: true, EpochFence: time.Minute}},
		{name: "sentinel off", url: "redis-sentinel://s:26379/m", mode: "off", want: proxies.Config{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target, err := redisx.ParseURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := failoverGuards(proxies.Config{}, tc.mode, target, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := failoverGuards(proxies.Config{}, "sometimes", &redisx.Target{}, time.Minute); err == nil {
		t.Error("a bad --broker-failover was accepted")
	}
}
