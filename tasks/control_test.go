package tasks

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"crawlq/sessions"
)

// TestPickControl: the control a witness asks is the oldest unproven one
// (a witness was quarantined on it, nobody has had its items since), else
// the site's page of the job's kind last answered with items, else the
// most recent of another kind; never one older than ControlFor (an old
// unproven one is dropped), nor the request being confirmed.
func TestPickControl(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	raw := func(url string, age time.Duration) string {
		b, err := json.Marshal(control{URL: url, Page: 1, At: now.Add(-age)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	unproven := func(url string, at time.Time) string {
		b, err := json.Marshal(control{Kind: "product", URL: url, Page: 1, At: at})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name  string
		all   map[string]string
		url   string
		want  sessions.Control
		stale []string
	}{
		{name: "none kept", want: sessions.Control{}},
		{name: "the job's kind first", url: "/q=empty",
			all:  map[string]string{"search": raw("/q=a", time.Minute), "product": raw("/p=1", time.Second)},
			want: sessions.Control{Kind: "search", URL: "/q=a", Page: 1}},
		{name: "else the most recent", url: "/q=empty",
			all:  map[string]string{"category": raw("/c=1", time.Minute), "product": raw("/p=1", time.Second)},
			want: sessions.Control{Kind: "product", URL: "/p=1", Page: 1}},
		{name: "too old", url: "/q=empty",
			all:  map[string]string{"search": raw("/q=a", ControlFor)},
			want: sessions.Control{}},
		{name: "the request being confirmed is no control", url: "/q=a",
			all:  map[string]string{"search": raw("/q=a", time.Second), "product": raw("/p=1", time.Minute)},
			want: sessions.Control{Kind: "product", URL: "/p=1", Page: 1}},
		{name: "unreadable", url: "/q=empty", all: map[string]string{"search": "{"}, want: sessions.Control{}},
		{name: "the oldest unproven control first", url: "/q=empty",
			all: map[string]string{"search": raw("/q=a", time.Second),
				unprovenPrefix + "/p=2": unproven("/p=2", now.Add(-time.Minute)),
				unprovenPrefix + "/p=3": unproven("/p=3", now.Add(-time.Second))},
			want: sessions.Control{Kind: "product", URL: "/p=2", Page: 1, Unproven: true}},
		{name: "an unproven control too old is dropped", url: "/q=empty",
			all: map[string]string{"search": raw("/q=a", time.Second),
				unprovenPrefix + "/p=2": unproven("/p=2", now.Add(-ControlFor))},
			want:  sessions.Control{Kind: "search", URL: "/q=a", Page: 1},
			stale: []string{unprovenPrefix + "/p=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, stale := pickControl(tc.all, "search", tc.url, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pickControl (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.stale, stale); diff != "" {
				t.Errorf("stale fields (-want +got):\n%s", diff)
			}
		})
	}
}
