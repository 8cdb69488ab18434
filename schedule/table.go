package schedule

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the schedules as an aligned table, and says when no
// scheduler is live to queue them.
func WriteTable(w io.Writer, ss []Status, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tCRON\tJOBS\tNEXT\tLAST RUN\tOUTCOME\tRUNS\tSKIPPED\tPAUSED")
	for _, s := range ss {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%t\n", s.Name, s.Cron, s.Jobs, s.NextText(now),
			when(s.RunTick, now), s.Outcome(), s.Runs, s.Skipped, s.Paused)
	}
	if len(ss) == 0 {
		fmt.Fprintln(tw, "(no schedules: crawlq schedule add)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if noScheduler(ss) {
		fmt.Fprintln(w, NoSchedulerText)
	}
	return nil
}

// NoSchedulerText says that no scheduler queues the active schedules.
const NoSchedulerText = "no `crawlq scheduler` is running: no tick is queued until one starts"

// NextText is the next tick relative to now ("in 1m30s"), marked when no
// scheduler is live to queue it.
func (s Status) NextText(now time.Time) string {
	if s.NoScheduler {
		return when(s.Next, now) + " (no scheduler)"
	}
	return when(s.Next, now)
}

// noScheduler says some schedule in ss is active with no live scheduler.
func noScheduler(ss []Status) bool {
	for _, s := range ss {
		if s.NoScheduler {
			return true
		}
	}
	return false
}

// Outcome is the last run's outcome in words: "running: 3/10 done, 1
// failed" or "done: 9 completed, 1 failed".
func (s Status) Outcome() string {
	c := s.LastRun
	if c == nil {
		return "-"
	}
	if !c.Done() {
		return fmt.Sprintf("running: %d/%d done, %d failed", c.Completed+c.Failed, c.Total, c.Failed)
	}
	return fmt.Sprintf("done: %s, %d failed", c.CompletedText(), c.Failed)
}

// when is t relative to now: "in 1m30s", "2m ago", "-" for zero.
func when(t, now time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.After(now):
		return "in " + t.Sub(now).Round(time.Second).String()
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

var htmlTable = template.Must(template.New("schedules").Parse(`{{if not .Rows}}<p>No schedules: <code>crawlq schedule add</code>.</p>{{else}}
<table class="schedules"><thead><tr><th class="l">Schedule</th><th class="l">Cron</th><th>Jobs</th><th class="l">Next run</th><th class="l">Last run</th><th class="l">Outcome</th><th>Runs</th><th>Skipped</th><th class="l">Paused</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="l">{{.Name}}</td><td class="l"><code>{{.Cron}}</code></td><td>{{.Jobs}}</td><td class="l">{{.Next}}</td><td class="l">{{.Last}}</td><td class="l">{{.Outcome}}</td><td>{{.Runs}}</td><td>{{.Skipped}}</td><td class="l">{{.Paused}}</td></tr>
{{end}}</tbody></table>{{if .NoScheduler}}<p class="warn">{{.NoSchedulerText}}</p>{{end}}{{end}}`))

// HTML renders the schedules as the dashboard's table.
func HTML(ss []Status, now time.Time) (template.HTML, error) {
	type row struct {
		Name, Cron, Next, Last, Outcome string
		Jobs                            int
		Runs, Skipped                   int64
		Paused                          bool
	}
	rows := make([]row, len(ss))
	for i, s := range ss {
		rows[i] = row{s.Name, s.Cron, s.NextText(now), when(s.RunTick, now), s.Outcome(), s.Jobs, s.Runs, s.Skipped, s.Paused}
	}
	var b strings.Builder
	err := htmlTable.Execute(&b, struct {
		Rows            []row
		NoScheduler     bool
		NoSchedulerText string
	}{rows, noScheduler(ss), NoSchedulerText})
	return template.HTML(b.String()), err
}
