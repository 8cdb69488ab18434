package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// parser reads five fields or a descriptor (@hourly, @every 2h), as
// Asynq's scheduler does.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron spec that names the tick a firing belongs to.
type Spec struct {
	text  string
	every time.Duration // for @every: the period, whole seconds
	sched cron.Schedule
}

// SpecError is a cron spec ParseSpec refuses, and why.
type SpecError struct {
	Spec, Reason string
}

func (e *SpecError) Error() string { return fmt.Sprintf("cron spec %q: %s", e.Spec, e.Reason) }

// ParseSpec parses a cron spec as Asynq's scheduler does, but refuses an
// "@every" period under a second or not in whole seconds. Its error is a
// *SpecError.
func ParseSpec(text string) (Spec, error) {
	s, err := parser.Parse(text)
	if err != nil {
		return Spec{}, &SpecError{Spec: text,
			Reason: fmt.Sprintf("%v (want 5 fields \"MIN HOUR DOM MON DOW\", @hourly, @daily or @every DURATION)", err)}
	}
	if strings.HasPrefix(strings.TrimSpace(text), "TZ=") || strings.HasPrefix(strings.TrimSpace(text), "CRON_TZ=") {
		return Spec{}, &SpecError{Spec: text, Reason: "time zones are not supported, specs run in UTC"}
	}
	sp := Spec{text: text, sched: s}
	if _, ok := s.(cron.ConstantDelaySchedule); ok {
		if sp.every, err = everyPeriod(text); err != nil {
			return Spec{}, err
		}
	}
	return sp, nil
}

// everyPeriod is the period of "@every D", refused under a second or not
// a whole number of seconds (the cron library would round it to one
// silently: "@every 0s" and "@every 500ms" would run every second).
func everyPeriod(text string) (time.Duration, error) {
	raw := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "@every"))
	d, err := time.ParseDuration(raw)
	switch {
	case err != nil:
		return 0, &SpecError{Spec: text, Reason: err.Error()}
	case d < time.Second:
		return 0, &SpecError{Spec: text, Reason: "@every " + raw + " is under 1s, the shortest period"}
	case d%time.Second != 0:
		return 0, &SpecError{Spec: text, Reason: "@every " + raw + " is not a whole number of seconds"}
	}
	return d, nil
}

// String is the spec as given.
func (s Spec) String() string { return s.text }

// lookback bounds how late a firing may come and still be given its tick.
const lookback = time.Hour

// Tick is the scheduled time a firing at now belongs to: the latest
// activation at or before now. "@every D" ticks on the multiples of D since
// the Unix epoch, whenever a scheduler started, so all schedulers agree on
// the tick and fire it at that time (Run waits for Next). A five-field
// spec ticks on its activations. Zero when none was within an hour.
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

// Next is the first tick after now: when Run fires it, and the NEXT that
// `schedule list`, `status` and the dashboard show.
func (s Spec) Next(now time.Time) time.Time {
	now = now.UTC()
	if s.every > 0 {
		return s.Tick(now).Add(s.every)
	}
	return s.sched.Next(now).UTC()
}
