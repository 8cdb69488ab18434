package tasks

import (
	"testing"
	"time"

	"crawlq/tasks/site"
)

// TestRefusalSaysWhatIsTrue: a duplicate's refusal names its Asynq state
// and, for a finished job, how long ago and that --again runs it.
func TestRefusalSaysWhatIsTrue(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		q    Queued
		want string
	}{
		{name: "queued", q: Queued{State: "pending"}, want: "already queued, not queued twice"},
		{name: "running", q: Queued{State: "active"}, want: "running now, not queued twice"},
		{name: "scheduled", q: Queued{State: "scheduled", At: now.Add(90 * time.Second)}, want: "scheduled to run in 2m, not queued twice"},
		{name: "retrying", q: Queued{State: "retry", At: now.Add(12 * time.Second)}, want: "failed, retrying in 12s, not queued twice"},
		{name: "completed", q: Queued{State: "completed", At: now.Add(-5 * time.Minute)}, want: "completed 5m ago; --again runs it again"},
		{name: "archived", q: Queued{State: "archived", At: now.Add(-65 * time.Minute)}, want: "failed and archived 1h5m ago; --again runs it again"},
		{name: "forgotten", q: Queued{}, want: "queued or finished moments ago, not queued twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.Refusal(now); got != tc.want {
				t.Errorf("Refusal = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTaskIDFollowsTheCrawl: the task ID changes with every option that
// changes the crawl, and not with the schedule or run.
func TestTaskIDFollowsTheCrawl(t *testing.T) {
	base := Job{Site: "wildberries", Kind: "search", Pages: 2, Request: site.Request{Query: "кофе"}}
	tests := []struct {
		name   string
		change func(j *Job)
		same   bool
	}{
		{name: "pages", change: func(j *Job) { j.Pages = 3 }},
		{name: "follow", change: func(j *Job) { j.Follow = true }},
		{name: "class", change: func(j *Job) { j.Class = "mobile" }},
		{name: "query", change: func(j *Job) { j.Query = "чай" }},
		{name: "run", change: func(j *Job) { j.Run = "abc" }, same: true},
		{name: "schedule", change: func(j *Job) { j.Schedule = "nightly" }, same: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := base
			tc.change(&j)
			if same := j.TaskID() == base.TaskID(); same != tc.same {
				t.Errorf("changing %s: same ID %v, want %v", tc.name, same, tc.same)
			}
		})
	}
	page := Job{Kind: KindFetch, Fetch: &PageSpec{URL: "https://example.com/", Fields: map[string]string{"title": "h1"}}}
	other := page
	other.Fetch = &PageSpec{URL: "https://example.com/", Fields: map[string]string{"title": "h2"}}
	if page.TaskID() == other.TaskID() {
		t.Error("a page job with other selectors has the same task ID")
	}
}
