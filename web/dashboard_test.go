package web

import (
	"testing"
	"time"
)

func TestRoundLatency(t *testing.T) {
	tests := []struct {
		name string
		in   time.Duration
		want string
	}{
		{name: "loopback answer", in: 412345 * time.Nanosecond, want: "412µs"},
		{name: "milliseconds", in: 1400 * time.Microsecond, want: "1ms"},
		{name: "seconds", in: 2345 * time.Millisecond, want: "2.345s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := roundLatency(tc.in); got != tc.want {
				t.Errorf("roundLatency(%s) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
