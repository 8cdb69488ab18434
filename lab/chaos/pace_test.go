package chaos

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"crawlq/tasks"
	"crawlq/testbed"
)

// TestLearnedPaceKeepsTheRule: --learn-pace's config gives every site of
// the testbed min_interval auto, its lower bound the testbed's rule (so
// the learner never goes under what I2 is checked against) and its upper
// twice the pace the testbed's config told.
func TestLearnedPaceKeepsTheRule(t *testing.T) {
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	path := filepath.Join(t.TempDir(), "crawlq.yaml")
	if err := os.WriteFile(path, withLearnedPace(tb.CrawlqConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := tasks.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, rule := range tb.MinIntervals() {
		s, err := l.Sites.Get(name)
		if err != nil || s.Learn == nil {
			t.Fatalf("%s: not learned (%+v, %v)", name, s, err)
		}
		told := time.Duration(float64(rule) * testbed.ConfigMargin)
		if s.Learn.Min != rule || s.Learn.Max != 2*told {
			t.Errorf("%s: learned within %s..%s, want %s..%s", name, s.Learn.Min, s.Learn.Max, rule, 2*told)
		}
	}
}
