package site

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// XHR is how a site's pages call its APIs: which of its URLs are such
// calls (sent with the browser's fetch() headers instead of a page
// load's), the headers the site's script adds and the page a call comes
// from.
type XHR struct {
	// All marks every URL of the site as an API call (Wildberries, crawled
	// through its APIs), but those Page says are pages.
	All bool
	// Page, with All, says rawURL is a page a user opens, not a call
	// (Wildberries' product page, asked under fetch: browser).
	Page func(rawURL string) bool
	// Paths are URL path prefixes of the site's API calls ("/api/").
	Paths []string
	// Headers are the site's own headers its script adds to its calls, in
	// order. A value may hold {deviceid} (stable per session) and
	// {queryid} (new per request).
	Headers []Header
	// HeadersFor, when set, gives the site's headers of each call in place
	// of Headers: the site's pages send another set to each endpoint
	// (Wildberries: x-queryid and x-userid on search only, none to its
	// basket CDN). A site's `xhr_headers` in YAML replaces both.
	HeadersFor func(s *Site, apiURL string) []Header
	// From is the page whose script calls apiURL (Wildberries: the search
	// page of a search); nil or "": the session's last page.
	From func(s *Site, apiURL string) string
}

// Header is one header a site's script sets.
type Header struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// IsXHR reports whether rawURL is one of s's API calls.
func (s *Site) IsXHR(rawURL string) bool {
	if s.XHR.All {
		return s.XHR.Page == nil || !s.XHR.Page(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	for _, p := range s.XHR.Paths {
		if strings.HasPrefix(u.Path, p) {
			return true
		}
	}
	return false
}

// XHRHeaders are the site's own headers its script adds to the call of
// apiURL, in order.
func (s *Site) XHRHeaders(apiURL string) []Header {
	if s.XHR.HeadersFor != nil {
		return s.XHR.HeadersFor(s, apiURL)
	}
	return s.XHR.Headers
}

// XHRFrom is the page whose script calls apiURL, "" when the site does
// not say.
func (s *Site) XHRFrom(apiURL string) string {
	if s.XHR.From == nil {
		return ""
	}
	return s.XHR.From(s, apiURL)
}

// applyXHR takes the `xhr_paths` and `xhr_headers` of c: paths must
// start with "/", headers need a name without spaces or colons.
func applyXHR(s *Site, c SiteConfig, field func(string) string) error {
	for i, p := range c.XHRPaths {
		if !strings.HasPrefix(p, "/") {
			return &ConfigError{Field: fmt.Sprintf("%s[%d]", field("xhr_paths"), i), Reason: fmt.Sprintf("%q is not a path starting with /", p)}
		}
	}
	if c.XHRPaths != nil {
		s.XHR.Paths, s.XHR.All = slices.Clone(c.XHRPaths), false
	}
	if c.XHRHeaders == nil {
		return nil
	}
	for i, h := range *c.XHRHeaders {
		if h.Name == "" || strings.ContainsAny(h.Name, " \t\r\n:") {
			return &ConfigError{Field: fmt.Sprintf("%s[%d].name", field("xhr_headers"), i), Reason: fmt.Sprintf("%q is not a header name", h.Name)}
		}
	}
	s.XHR.Headers, s.XHR.HeadersFor = slices.Clone(*c.XHRHeaders), nil
	return nil
}
