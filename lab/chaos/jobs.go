package chaos

import (
	"math/rand/v2"
	"strings"

	"crawlq/tasks"
	"crawlq/tasks/site"
	"crawlq/testbed"
)

// plannedJob is a job and the (site, id) keys of the items it must write.
type plannedJob struct {
	job   tasks.Job
	items []string
}

// itemKey identifies an item across the results stream.
func itemKey(siteName, id string) string { return siteName + "\x00" + id }

// searchShare is the share of a site's jobs that are searches.
const searchShare = 0.1

// planJobs spreads n jobs over the three sites: a few small searches (one
// or two pages, no follow), noResult searches that match nothing, and
// product/item jobs by ID or URL. No two jobs yield the same item, so any
// (site, id) written twice to the results stream is a duplicate.
func planJobs(tb *testbed.Testbed, n int, seed int64, noResult int) []plannedJob {
	var out []plannedJob
	for i, name := range testbed.SiteNames {
		count := n / len(testbed.SiteNames)
		if i < n%len(testbed.SiteNames) {
			count++
		}
		empty := noResult / len(testbed.SiteNames)
		if i < noResult%len(testbed.SiteNames) {
			empty++
		}
		out = append(out, noResultSearches(tb.Catalog, name, empty)...)
		out = append(out, planSite(tb, name, count-empty, seed+int64(i))...)
	}
	rand.New(rand.NewPCG(uint64(seed), 0xc4a05)).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func planSite(tb *testbed.Testbed, name string, count int, seed int64) []plannedJob {
	taken := map[string]bool{}
	searches := pickSearches(tb.Catalog, name, max(1, int(float64(count)*searchShare)), taken)
	out := searches
	products := tb.Catalog.Products(name)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e37))
	rng.Shuffle(len(products), func(i, j int) { products[i], products[j] = products[j], products[i] })
	for _, p := range products {
		if len(out) == count {
			break
		}
		if taken[p.ID] {
			continue
		}
		taken[p.ID] = true
		out = append(out, plannedJob{job: productJob(tb, p), items: []string{itemKey(name, p.ID)}})
	}
	return out
}

// noResultSearches are n searches for queries that match nothing on the
// site: no items expected.
func noResultSearches(c *testbed.Catalog, name string, n int) []plannedJob {
	var out []plannedJob
	for _, q := range c.NoResultQueries(name, n) {
		out = append(out, plannedJob{job: tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q}, Pages: 2}})
	}
	return out
}

// productJob asks for one product: by ID on Wildberries, by its page URL
// on Ozon and Avito (an Avito ID alone would need a redirect).
func productJob(tb *testbed.Testbed, p testbed.Product) tasks.Job {
	kind := "product"
	if p.Site == testbed.SiteAvito {
		kind = "item"
	}
	req := site.Request{ID: p.ID}
	if p.Site != testbed.SiteWildberries {
		req = site.Request{URL: tb.SiteURL(p.Site) + p.URL}
	}
	return tasks.Job{Site: p.Site, Kind: kind, Request: req}
}

// maxSearchPages bounds a search job's pages: long enough that its
// session is in flight across several paced requests.
const maxSearchPages = 3

// pickSearches finds want one-word queries, those with two pages or more
// first, whose first pages (up to maxSearchPages) share no product with
// each other nor with taken, which they are added to.
func pickSearches(c *testbed.Catalog, name string, want int, taken map[string]bool) []plannedJob {
	cands := candidates(c, name)
	budget := len(c.Products(name)) / 2 // leave products for the product jobs
	var out []plannedJob
	for _, multi := range []bool{true, false} {
		for _, q := range cands {
			if len(out) == want {
				return out
			}
			if (q.pages >= 2) == multi && q.free(taken, budget) {
				out = append(out, q.plan(name, taken))
				budget -= len(q.ids)
			}
		}
	}
	return out
}

// candidate is a query and the products of its first pages.
type candidate struct {
	query string
	pages int
	ids   []string
}

// candidates are the distinct title words of four letters or more, in
// catalog order, with the products of their first maxSearchPages pages.
func candidates(c *testbed.Catalog, name string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	size := testbed.PageSizes[name]
	for _, p := range c.Products(name) {
		for _, w := range strings.Fields(strings.ToLower(p.Title)) {
			if len([]rune(w)) < 4 || seen[w] {
				continue
			}
			seen[w] = true
			m := c.Matches(name, w)
			q := candidate{query: w, pages: min((len(m)+size-1)/size, maxSearchPages)}
			for _, p := range m[:min(len(m), q.pages*size)] {
				q.ids = append(q.ids, p.ID)
			}
			out = append(out, q)
		}
	}
	return out
}

// free says whether the query's products are untaken and within budget.
func (q candidate) free(taken map[string]bool, budget int) bool {
	if len(q.ids) == 0 || len(q.ids) > budget {
		return false
	}
	for _, id := range q.ids {
		if taken[id] {
			return false
		}
	}
	return true
}

// plan takes the query's products and returns its search job.
func (q candidate) plan(name string, taken map[string]bool) plannedJob {
	j := plannedJob{job: tasks.Job{Site: name, Kind: "search", Request: site.Request{Query: q.query}, Pages: q.pages}}
	for _, id := range q.ids {
		taken[id] = true
		j.items = append(j.items, itemKey(name, id))
	}
	return j
}
