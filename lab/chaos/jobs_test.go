package chaos

import (
	"context"
	"testing"

	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// TestPlanJobs: the plan has the asked number of valid jobs on every site,
// multi-page searches and the 12 no-result searches among them, distinct
// task IDs, and no item two jobs would yield (so any repeat in the
// results stream is a duplicate).
func TestPlanJobs(t *testing.T) {
	tb, err := testbed.Start(context.Background(), testbed.Config{Proxies: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	loaded, err := tasks.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range testbed.SiteNames {
		if err := loaded.Sites.Apply(siteConfig(name, tb.SiteURL(name))); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{MinJobs, 600, 1500} {
		checkPlan(t, planJobs(tb, n, 1, 12), n, loaded.Sites)
	}
}

func checkPlan(t *testing.T, plan []plannedJob, n int, reg *site.Registry) {
	t.Helper()
	if len(plan) != n {
		t.Fatalf("planned %d jobs, want %d", len(plan), n)
	}
	ids, items := map[string]bool{}, map[string]bool{}
	kinds := map[string]int{}
	empty := 0
	for _, p := range plan {
		j, err := p.job.Normalize(reg)
		if err != nil {
			t.Fatalf("job %+v: %v", p.job, err)
		}
		if ids[j.TaskID()] {
			t.Errorf("task ID %s planned twice", j.TaskID())
		}
		ids[j.TaskID()] = true
		kinds[j.Site+":"+j.Kind]++
		if j.Pages > 1 {
			kinds["multi-page"]++
		}
		if len(p.items) == 0 {
			empty++
		}
		for _, k := range p.items {
			if items[k] {
				t.Errorf("item %q planned from two jobs", k)
			}
			items[k] = true
		}
	}
	if empty != 12 {
		t.Errorf("%d jobs yield no item, want the 12 no-result searches", empty)
	}
	for _, k := range []string{"wildberries:search", "wildberries:product", "ozon:search", "ozon:product", "avito:search", "avito:item", "multi-page"} {
		if kinds[k] == 0 {
			t.Errorf("no %s job in the plan (%v)", k, kinds)
		}
	}
}

func siteConfig(name, url string) site.Config {
	return site.Config{Sites: map[string]site.SiteConfig{name: {BaseURL: url}}}
}
