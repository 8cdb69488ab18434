package schedule

import (
	"testing"
	"time"
)

// TestSpecTick: a firing belongs to the latest activation at or before it;
// @every ticks on multiples of its period since the epoch, so schedulers
// started at different moments agree.
func TestSpecTick(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name, spec, now, tick, next string
	}{
		{"every 2s, even phase", "@every 2s", "2026-12-03T10:00:10.004Z", "2026-12-03T10:00:10Z", "2026-12-03T10:00:12Z"},
		{"every 2s, odd phase", "@every 2s", "2026-12-03T10:00:11.004Z", "2026-12-03T10:00:10Z", "2026-12-03T10:00:12Z"},
		{"every 4h", "@every 4h", "2026-12-03T10:59:00Z", "2026-12-03T08:00:00Z", "2026-12-03T12:00:00Z"},
		{"five fields", "*/15 * * * *", "2026-12-03T10:31:02Z", "2026-12-03T10:30:00Z", "2026-12-03T10:45:00Z"},
		{"on the activation", "0 */4 * * *", "2026-12-03T12:00:00Z", "2026-12-03T12:00:00Z", "2026-12-03T16:00:00Z"},
		{"hourly", "@hourly", "2026-12-03T12:00:00.300Z", "2026-12-03T12:00:00Z", "2026-12-03T13:00:00Z"},
		{"none within the lookback", "0 0 1 1 *", "2026-12-03T12:00:00Z", "0001-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSpec(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Tick(at(c.now)); !got.Equal(at(c.tick)) {
				t.Errorf("Tick(%s) = %s, want %s", c.now, got, c.tick)
			}
			if got := s.Next(at(c.now)); !got.Equal(at(c.next)) {
				t.Errorf("Next(%s) = %s, want %s", c.now, got, c.next)
			}
		})
	}
}

// TestParseSpecRefuses: what Asynq's scheduler would refuse is refused at
// add time, with the spec named.
func TestParseSpecRefuses(t *testing.T) {
	for _, spec := range []string{"", "61 * * * *", "* * * *", "@every nope", "TZ=Europe/Moscow 0 * * * *"} {
		if _, err := ParseSpec(spec); err == nil {
			t.Errorf("ParseSpec(%q) accepted", spec)
		}
	}
}
