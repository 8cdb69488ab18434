package schedule

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"crawlq/tasks"
	"crawlq/tasks/site"
)

// Schedule is a named set of jobs queued again at every tick of its cron
// spec.
type Schedule struct {
	Name string `json:"name"`
	// Cron is the spec, as Asynq's scheduler reads it (UTC).
	Cron string `json:"cron"`
	// Jobs are validated and normalized when the schedule is added.
	Jobs []tasks.Job `json:"jobs"`
	// Paused is kept apart from the definition (see Store.SetPaused).
	Paused  bool      `json:"paused,omitempty"`
	Created time.Time `json:"created"`
}

// ErrNotFound is returned for a schedule name that does not exist.
var ErrNotFound = errors.New("no such schedule")

// ErrExists is returned by Add for a name already taken.
var ErrExists = errors.New("schedule exists")

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a schedule name: letters, digits, '.', '_' and '-', at
// most 64, starting with a letter or digit (it goes into task IDs).
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("schedule name %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// New validates a schedule: its name, its spec and every job (where names
// each job's origin for the error: "jobs.jsonl:3"). Its jobs are stored
// normalized.
func New(reg *site.Registry, name, cron string, jobs []tasks.Job, where func(i int) string) (Schedule, error) {
	if err := ValidName(name); err != nil {
		return Schedule{}, err
	}
	spec, err := ParseSpec(cron)
	if err != nil {
		return Schedule{}, err
	}
	if spec.Next(time.Now()).IsZero() {
		return Schedule{}, &SpecError{Spec: cron, Reason: "it never fires: no date in the next five years matches it (31 February?)"}
	}
	if len(jobs) == 0 {
		return Schedule{}, fmt.Errorf("schedule %s: no jobs", name)
	}
	if _, err := (&tasks.Enqueuer{Sites: reg}).Build(jobs, where); err != nil {
		return Schedule{}, err
	}
	s := Schedule{Name: name, Cron: cron, Jobs: make([]tasks.Job, len(jobs)), Created: time.Now().UTC()}
	for i, j := range jobs {
		j.Schedule = name
		n, err := j.Normalize(reg)
		if err != nil {
			return Schedule{}, fmt.Errorf("%s: %w", where(i), err)
		}
		s.Jobs[i] = n
	}
	return s, nil
}

// Spec is the schedule's parsed cron spec.
func (s Schedule) Spec() (Spec, error) { return ParseSpec(s.Cron) }
