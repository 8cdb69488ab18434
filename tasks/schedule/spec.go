package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser reads the specs Asynq's scheduler reads: five fields or a
// descriptor (@hourly, @every 2h).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron spec that names the tick a firing belongs to.
type Spec struct {
	text  string
	every time.Duration // for @every: the period, whole seconds
	sched cron.Schedule
}

// ParseSpec parses a cron spec as Asynq's scheduler does.
func ParseSpec(text string) (Spec, error) {
	s, err := parser.Parse(text)
	if err != nil {
		return Spec{}, fmt.Errorf("cron spec %q: %v (want 5 fields \"MIN HOUR DOM MON DOW\", @hourly, @daily or @every DURATION)", text, err)
	}
	if strings.HasPrefix(strings.TrimSpace(text), "TZ=") || strings.HasPrefix(strings.TrimSpace(text), "CRON_TZ=") {
		return Spec{}, fmt.Errorf("cron spec %q: time zones are not supported, specs run in UTC", text)
	}
	sp := Spec{text: text, sched: s}
	if d, ok := s.(cron.ConstantDelaySchedule); ok {
		sp.every = d.Delay
	}
	return sp, nil
}

// String is the spec as given.
func (s Spec) String() string { return s.text }

// lookback bounds how late a firing may come and still be given its tick.
const lookback = time.Hour

// Tick is the scheduled time a firing at now belongs to: the latest
// activation at or before now. "@every D" ticks on the multiples of D since
// the Unix epoch, whenever a scheduler started, so all schedulers agree on
// the tick (each fires once per period, at its own phase within it). A
// five-field spec ticks on its activations. Zero when none was within an
// hour.
func (s Spec) Tick(now time.Time) time.Time {
	now = now.UTC() // Asynq's scheduler runs its cron in UTC
	if s.every > 0 {
		d := s.every.Nanoseconds()
		return time.Unix(0, now.UnixNano()/d*d).UTC()
	}
	t := s.sched.Next(now.Add(-lookback))
	if t.After(now) {
		return time.Time{}
	}
	for n := s.sched.Next(t); !n.After(now); n = s.sched.Next(n) {
		t = n
	}
	return t.UTC()
}

// Next is the first tick after now.
func (s Spec) Next(now time.Time) time.Time {
	now = now.UTC()
	if s.every > 0 {
		return s.Tick(now).Add(s.every)
	}
	return s.sched.Next(now).UTC()
}
