package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestWorkerPollInterval: --poll-interval (default two seconds) becomes the
// worker config's PollInterval, which tasks hands to Asynq.
func TestWorkerPollInterval(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default two seconds", want: 2 * time.Second},
		{name: "set", args: []string{"--poll-interval", "250ms"}, want: 250 * time.Millisecond},
		{name: "zero refused", args: []string{"--poll-interval", "0s"}, wantErr: "--poll-interval 0s: want a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f workerFlags
			fl := pflag.NewFlagSet("worker", pflag.ContinueOnError)
			addWorkerFlags(fl, &f)
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.taskConfig()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || cfg.PollInterval != tt.want {
				t.Errorf("PollInterval = %s (%v), want %s", cfg.PollInterval, err, tt.want)
			}
		})
	}
}

// TestFallbackHeartbeat: the fallback broker beats with the worker's side
// loops, never less often than three times in a member's 15 s TTL and
// never more often than its 2 s default.
func TestFallbackHeartbeat(t *testing.T) {
	tests := []struct {
		name string
		poll time.Duration
		want time.Duration
	}{
		{name: "fast poll keeps the default", poll: 100 * time.Millisecond, want: 2 * time.Second},
		{name: "one-second poll", poll: time.Second, want: 5 * time.Second},
		{name: "slow poll stays within the TTL", poll: 10 * time.Second, want: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fallbackHeartbeat(tt.poll); got != tt.want {
				t.Errorf("fallbackHeartbeat(%s) = %s, want %s", tt.poll, got, tt.want)
			}
		})
	}
}
