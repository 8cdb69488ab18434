package web

import (
	"context"
	"crawlq/internal/mask/masktest"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		name string
		addr net.Addr
		want bool
	}{
		{name: "127.0.0.1", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, want: true},
		{name: "127.0.0.9", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 9)}, want: true},
		{name: "::1", addr: &net.TCPAddr{IP: net.IPv6loopback}, want: true},
		{name: "all interfaces v4", addr: &net.TCPAddr{IP: net.IPv4zero}, want: false},
		{name: "all interfaces v6", addr: &net.TCPAddr{IP: net.IPv6unspecified}, want: false},
		{name: "lan", addr: &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5)}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isLoopback(tt.addr); got != tt.want {
				t.Errorf("isLoopback(%v) = %t, want %t", tt.addr, got, tt.want)
			}
		})
	}
}

// TestRunStopsCleanly runs the server with its sampler, cancels it, and
// checks that Run returns, nothing leaks, and a loopback listen without
// auth logs no warning.
func TestRunStopsCleanly(t *testing.T) {
	c := newCluster(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	core, logs := observer.New(zap.InfoLevel)
	s, err := NewServer(Config{Redis: c.opt, Broker: c.broker, Logger: zap.New(zapcore.NewTee(core, masktest.Core(t))), Refresh: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, "127.0.0.1:0") }()
	waitFor(t, func() bool { return s.hist.len() >= 2 }) // the sampler ran twice
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := logs.FilterLevelExact(zap.WarnLevel).Len(); n != 0 {
		t.Errorf("%d warnings on a loopback listen: %v", n, logs.FilterLevelExact(zap.WarnLevel).All())
	}
	if logs.FilterMessage("web: dashboard up").Len() != 1 {
		t.Errorf("no startup log line: %v", logs.All())
	}
}

// waitFor polls cond until it holds, failing after 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
