package tasks

import (
	"bytes"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"crawlq/detect"
	"crawlq/results/item"
	"crawlq/tasks/site"
)

// PageSpec is a generic page:fetch job: a URL, what proves the page is the
// real one, and the fields to extract as CSS selectors, so a site crawlq
// does not know is crawled without Go code.
type PageSpec struct {
	// URL is the absolute http(s) URL to fetch.
	URL string `json:"url"`
	// Expect lists CSS selectors of which at least one must match, else the
	// page is judged Blocked (a ban or captcha page instead of content).
	Expect []string `json:"expect,omitempty"`
	// Markers are body strings that mean a block page.
	Markers []string `json:"markers,omitempty"`
	// Item is the selector of each item on the page; empty means the whole
	// page is one item.
	Item string `json:"item,omitempty"`
	// Fields maps an item field (id, title, price, old_price, currency,
	// seller, rating, reviews, url) to a selector inside the item, with an
	// optional "@attr" to read an attribute instead of the text.
	Fields map[string]string `json:"fields"`
}

// pageFields are the Item fields a PageSpec may fill.
var pageFields = map[string]bool{"id": true, "title": true, "price": true, "old_price": true,
	"currency": true, "seller": true, "rating": true, "reviews": true, "url": true}

func (j Job) normalizeFetch() (Job, error) {
	if j.Fetch == nil {
		return j, &JobError{"fetch", "a page:fetch job needs a fetch spec with url and fields"}
	}
	u, err := url.Parse(j.Fetch.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return j, &JobError{"fetch.url", fmt.Sprintf("%q is not an absolute http(s) URL", j.Fetch.URL)}
	}
	if j.Site == "" {
		j.Site = u.Hostname()
	}
	if err := j.Fetch.check(); err != nil {
		return j, err
	}
	j.Request, j.Pages, j.Follow = site.Request{}, 1, false
	return j, j.normalizeCommon()
}

func (p *PageSpec) check() error {
	if len(p.Fields) == 0 {
		return &JobError{"fetch.fields", "name at least one field to extract"}
	}
	for _, s := range append(append([]string{}, p.Expect...), p.Item) {
		if err := checkSelector(s); err != nil {
			return &JobError{"fetch.expect", err.Error()}
		}
	}
	for name, sel := range p.Fields {
		if !pageFields[name] {
			return &JobError{"fetch.fields." + name, "unknown field (want id, title, price, old_price, currency, seller, rating, reviews, url)"}
		}
		if err := checkSelector(splitAttr(sel)); err != nil {
			return &JobError{"fetch.fields." + name, err.Error()}
		}
	}
	return nil
}

func checkSelector(s string) error {
	if s == "" {
		return nil
	}
	if _, err := cascadia.Compile(s); err != nil {
		return fmt.Errorf("selector %q: %v", s, err)
	}
	return nil
}

func splitAttr(sel string) string {
	s, _, _ := strings.Cut(sel, "@")
	return strings.TrimSpace(s)
}

// pageRule is the detection rule of a generic page job.
func (p *PageSpec) rule() detect.Rule {
	return detect.Rule{Selectors: p.Expect, Markers: p.Markers}
}

// extract applies the spec to a fetched page.
func (p *PageSpec) extract(siteName string, body []byte, pageURL string, at time.Time) ([]item.Item, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", pageURL, err)
	}
	roots := doc.Selection
	if p.Item != "" {
		roots = doc.Find(p.Item)
	}
	var out []item.Item
	roots.Each(func(i int, s *goquery.Selection) {
		it := item.Item{Site: siteName, URL: pageURL, Currency: "RUB", FetchedAt: at}
		for _, name := range sortedKeys(p.Fields) {
			setField(&it, name, pick(s, p.Fields[name]), pageURL)
		}
		if it.ID == "" {
			it.ID = fmt.Sprintf("%s#%d", pageURL, i+1)
		}
		out = append(out, it)
	})
	return out, nil
}

func pick(s *goquery.Selection, sel string) string {
	css, attr, hasAttr := strings.Cut(sel, "@")
	node := s
	if css = strings.TrimSpace(css); css != "" {
		node = s.Find(css).First()
	}
	if hasAttr {
		v, _ := node.Attr(strings.TrimSpace(attr))
		return site.Clean(v)
	}
	return site.Clean(node.Text())
}

func setField(it *item.Item, name, v, pageURL string) {
	switch name {
	case "id":
		it.ID = v
	case "title":
		it.Title = v
	case "price":
		it.Price, _ = site.Kopecks(v)
	case "old_price":
		it.OldPrice, _ = site.Kopecks(v)
	case "currency":
		if v != "" {
			it.Currency = v
		}
	case "seller":
		it.Seller = v
	case "rating":
		it.Rating, _ = site.Rating(v)
	case "reviews":
		it.Reviews, _ = site.Count(v)
	case "url":
		if r := site.Resolve(pageURL, v, false); r != "" {
			it.URL = r
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
