package schedule

import (
	"strings"
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
		{"every 15s", "@every 15s", "2026-12-03T12:00:07Z", "2026-12-03T12:00:00Z", "2026-12-03T12:00:15Z"},
		{"every 15s, on a multiple", "@every 15s", "2026-12-03T12:00:15Z", "2026-12-03T12:00:15Z", "2026-12-03T12:00:30Z"},
		{"every 7s, from the epoch not the minute", "@every 7s", "2027-01-15T08:00:03Z", "2027-01-15T07:59:59Z", "2027-01-15T08:00:06Z"},
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
// add time, with the spec named; so is an @every period under a second or
// not in whole seconds, which the cron library would round to 1s.
func TestParseSpecRefuses(t *testing.T) {
	for _, c := range []struct{ spec, says string }{
		{"", ""}, {"61 * * * *", ""}, {"* * * *", ""}, {"@every nope", ""}, {"TZ=Europe/Moscow 0 * * * *", ""},
		{"@every 0s", "under 1s"}, {"@every 500ms", "under 1s"}, {"@every -2s", "under 1s"},
		{"@every 1500ms", "not a whole number of seconds"},
	} {
		_, err := ParseSpec(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.spec) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseSpec(%q) = %v, want an error naming the spec and saying %q", c.spec, err, c.says)
		}
	}
	if _, err := ParseSpec("@every 1s"); err != nil {
		t.Errorf("ParseSpec(@every 1s): %v", err)
	}
}
