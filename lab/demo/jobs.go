package demo

import (
	"context"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"

	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// planJobs builds the mix for every testbed site: searches with follow
// for queries whose match counts lie in the mix's bounds, and direct
// product jobs, by URL, for products none of those searches finds.
func planJobs(c *cluster, mix Mix) ([]tasks.Job, error) {
	var jobs []tasks.Job
	for _, name := range testbed.SiteNames {
		s, err := c.reg.Get(name)
		if err != nil {
			return nil, err
		}
		qs, err := pickQueries(c.tb.Catalog, name, mix)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			jobs = append(jobs, tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q},
				Pages: mix.Pages, Follow: true})
		}
		follow := s.Kinds["search"].Follow
		for _, p := range unmatched(c.tb.Catalog, name, qs, mix.Products) {
			jobs = append(jobs, tasks.Job{Site: name, Kind: follow, Request: site.Request{URL: c.tb.HTTPSSiteURL(name) + p.URL}})
		}
		jobs = append(jobs, noResultJobs(c.tb.Catalog, name, mix)...)
	}
	return jobs, nil
}

// noResultJobs are mix.Empty searches with follow for queries that match
// nothing on the site: each must complete with no items, and no proxy may
// be punished for its empty answer.
func noResultJobs(cat *testbed.Catalog, siteName string, mix Mix) []tasks.Job {
	var jobs []tasks.Job
	for _, q := range cat.NoResultQueries(siteName, mix.Empty) {
		jobs = append(jobs, tasks.Job{Site: siteName, Kind: "search", Request: site.Request{Query: q},
			Pages: max(mix.Pages, 1), Follow: true})
	}
	return jobs
}

// pickQueries finds mix.Searches distinct queries on a site, each matching
// between mix.MinMatches and mix.MaxMatches products: single title words
// first, then a title's first word with another of its words.
func pickQueries(cat *testbed.Catalog, siteName string, mix Mix) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, q := range candidates(cat.Products(siteName)) {
		if len(out) == mix.Searches {
			break
		}
		if seen[q] {
			continue
		}
		seen[q] = true
		if n := len(cat.Matches(siteName, q)); n >= mix.MinMatches && n <= mix.MaxMatches {
			out = append(out, q)
		}
	}
	if len(out) < mix.Searches {
		return nil, fmt.Errorf("job mix: only %d of %d queries on %s match %d..%d products",
			len(out), mix.Searches, siteName, mix.MinMatches, mix.MaxMatches)
	}
	return out, nil
}

// candidates lists the queries pickQueries tries, in order.
func candidates(ps []testbed.Product) []string {
	var words, pairs []string
	for _, p := range ps {
		ws := strings.Fields(strings.ToLower(p.Title))
		for i, w := range ws {
			if len([]rune(w)) < 4 {
				continue
			}
			words = append(words, w)
			if i > 0 {
				pairs = append(pairs, ws[0]+" "+w)
			}
		}
	}
	return append(words, pairs...)
}

// unmatched returns n products of a site that none of the queries finds.
func unmatched(cat *testbed.Catalog, siteName string, queries []string, n int) []testbed.Product {
	found := map[string]bool{}
	for _, q := range queries {
		for _, p := range cat.Matches(siteName, q) {
			found[p.ID] = true
		}
	}
	var out []testbed.Product
	ps := cat.Products(siteName)
	for i := len(ps) - 1; i >= 0 && len(out) < n; i-- {
		if !found[ps[i].ID] {
			out = append(out, ps[i])
		}
	}
	return out
}

// enqueue validates and queues the jobs; it returns how many were queued.
func (c *cluster) enqueue(ctx context.Context, jobs []tasks.Job) (int, error) {
	client := asynq.NewClient(c.conn.Asynq)
	defer client.Close()
	enq := &tasks.Enqueuer{Client: client, Sites: c.reg}
	ts, err := enq.Build(jobs, func(i int) string { return fmt.Sprintf("demo job %d (%s %s)", i+1, jobs[i].Site, jobs[i].Kind) })
	if err != nil {
		return 0, err
	}
	b, err := enq.Enqueue(ctx, ts)
	if err != nil {
		return 0, err
	}
	return len(b.Enqueued), nil
}
