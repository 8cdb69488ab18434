package tasks

import (
	"crawlq/fetcher"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// requestShape tells sessions how a URL of a site goes out: as the site's
// API call (site.XHR) with its script's headers, or as a page.
func requestShape(sites *site.Registry) func(name, rawURL string) sessions.Shape {
	return func(name, rawURL string) sessions.Shape {
		s, err := sites.Get(name)
		if err != nil || !s.IsXHR(rawURL) {
			return sessions.Shape{Kind: fetcher.Navigate}
		}
		sh := sessions.Shape{Kind: fetcher.XHR, From: s.XHRFrom(rawURL)}
		for _, h := range s.XHRHeaders(rawURL) {
			sh.Extra = append(sh.Extra, fetcher.HeaderField{Name: h.Name, Value: h.Value})
		}
		return sh
	}
}
