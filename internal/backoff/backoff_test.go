package backoff

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoffDoublesUpToMax(t *testing.T) {
	tests := []struct {
		name       string
		first, max time.Duration
		want       []time.Duration
	}{
		{name: "doubles then caps", first: time.Millisecond, max: 5 * time.Millisecond,
			want: []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}},
		{name: "first at max", first: 3 * time.Millisecond, max: 3 * time.Millisecond,
			want: []time.Duration{3 * time.Millisecond, 3 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.first, tc.max)
			var got []time.Duration
			for range tc.want {
				got = append(got, b.Next())
				if err := b.Wait(context.Background()); err != nil {
					t.Fatalf("Wait: %v", err)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
		})
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on an ended context = %v, want context.Canceled", err)
	}
	if err := New(time.Hour, time.Hour).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on an ended context = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v, want nil", err)
	}
}

func TestDelayDoublesUpToMax(t *testing.T) {
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, Delay(time.Second, 10*time.Second, n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delays (-want +got):\n%s", d)
	}
}
