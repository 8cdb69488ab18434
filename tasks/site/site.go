package site

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"crawlq/proxies"
	"crawlq/results/item"
)

// Endpoint names shared by the site packages. A site uses the ones it has.
const (
	// EndpointWeb is the public web site (product pages, item URLs).
	EndpointWeb = "web"
	// EndpointSearch is a search API host (Wildberries search.wb.ru).
	EndpointSearch = "search"
	// EndpointCard is a product card API host (Wildberries card.wb.ru).
	EndpointCard = "card"
	// EndpointCatalog is a catalog API host (Wildberries catalog.wb.ru).
	EndpointCatalog = "catalog"
)

// Site is one crawlable site and its defaults.
type Site struct {
	// Name is the registry key: "wildberries", "ozon", "avito".
	Name string
	// Queue is the Asynq queue of the site's jobs; default: Name.
	Queue string
	// MinInterval is the least time between two requests from one proxy to
	// this site, across the cluster (invariant I2).
	MinInterval time.Duration
	// Learn, if set, has the broker learn the pace per class within its
	// bounds instead of keeping MinInterval (min_interval: auto).
	Learn *proxies.PaceLearning
	// Class is the proxy class the site's jobs lease by default.
	Class proxies.Class
	// RotateAfter and RotateEvery make a modem change its IP before the
	// site bans it by volume: after that many requests from one IP, or
	// that long since its first (proxies.SiteConfig). 0: only on a ban.
	RotateAfter int
	RotateEvery time.Duration
	// RotateAfterAuto ("rotate_after: auto"): the budget per IP is
	// learned from where the site's bans fall (proxies.SiteConfig).
	RotateAfterAuto bool
	// Endpoints maps an endpoint name (EndpointWeb, EndpointSearch, …) to
	// its base URL, scheme and host without a trailing slash.
	Endpoints map[string]string
	// BaseURL, when set, replaces every endpoint (e.g. the crawlq testbed at
	// http://127.0.0.1:8081): paths stay the same.
	BaseURL string
	// Kinds maps a kind name to what the site does for it.
	Kinds map[string]Kind
	// Fetch is how pages are fetched: FetchAuto (the default: HTTP, and
	// the browser tier only to clear a JavaScript challenge), FetchHTTP
	// (never the browser: a challenge fails the attempt) or FetchBrowser
	// (every page rendered in the browser).
	Fetch string
	// Challenge says how the site's JavaScript challenge is cleared.
	Challenge Challenge
	// APIs maps the name of a generation of the site's APIs to the
	// endpoints it uses (Wildberries: "current" under
	// www.wildberries.ru/__internal/, "legacy" search.wb.ru and
	// card.wb.ru); API names the one in use. Empty for one-API sites.
	APIs map[string]map[string]string
	API  string
	// XHR says which URLs are the site's API calls and what its script
	// sends with them.
	XHR XHR
}

// Fetch policies (Site.Fetch).
const (
	FetchAuto    = "auto"
	FetchHTTP    = "http"
	FetchBrowser = "browser"
)

// Challenge is how a site's JavaScript challenge is cleared: in the
// browser, or over HTTP by the site's Solve.
type Challenge struct {
	// Page is the path on the web endpoint the browser opens to clear it
	// (Wildberries: "/", whose script mints the token its APIs want);
	// empty: the challenged page itself.
	Page string
	// Cookie is the clearance cookie's name: the challenge has cleared
	// once it is set and the page is no longer the challenge. Empty: once
	// the page is no longer the challenge.
	Cookie string
	// Wait is how long a lease of the site waits for a proxy that holds
	// its clearance rather than take one that needs a browser visit
	// (proxies.SiteConfig.ClearanceWait). 0: no wait.
	Wait time.Duration
	// Solve, when set, clears the challenge over HTTP in the job's
	// session instead of the browser (Avito's proof of work).
	Solve Solve
}

// ChallengeURL is the page the browser opens to clear a challenge met at
// pageURL. An API call is not a page a browser opens: a challenge met on
// one is cleared on the page its script runs on (XHRFrom), else on the
// site's home page.
func (s *Site) ChallengeURL(pageURL string) string {
	switch {
	case s.Challenge.Page != "":
		return s.Endpoint(EndpointWeb) + s.Challenge.Page
	case !s.IsXHR(pageURL):
		return pageURL
	}
	if from := s.XHRFrom(pageURL); from != "" {
		return from
	}
	return s.Endpoint(EndpointWeb) + "/"
}

// FetchPolicy is Fetch, FetchAuto when unset.
func (s *Site) FetchPolicy() string {
	if s.Fetch == "" {
		return FetchAuto
	}
	return s.Fetch
}

// Kind is one kind of job on a site: how to build its URLs and parse its
// pages.
type Kind struct {
	// Name is "search", "category", "product" or "item".
	Name string
	// Listing is true for paginated kinds (search, category): their
	// requests need a Page and their pages may have a next page and
	// targets to follow.
	Listing bool
	// Follow is the kind of the targets a listing page yields ("product"
	// or "item"); empty for non-listing kinds.
	Follow string
	// Normalize validates a request and puts it in canonical form (trims
	// the query, extracts the ID from a pasted URL). It returns a
	// *RequestError for bad input.
	Normalize func(s *Site, r Request) (Request, error)
	// Build returns the URL of a normalized request.
	Build func(s *Site, r Request) string
	// Parse turns a fetched body into a page. pageURL (may be empty)
	// resolves relative links; fetchedAt stamps the items.
	Parse func(s *Site, body []byte, pageURL string, fetchedAt time.Time) (Page, error)
	// Locate, if set, finds the URL that serves a request by asking
	// candidates through the job's session, when Build can only guess its
	// host (Wildberries' card on the basket CDN); nil: Build's URL is
	// fetched.
	Locate Locate
}

// Request names what to fetch. Listing kinds use Query, Page, Location and
// Category; product and item kinds use ID or URL.
type Request struct {
	// Query is the search text (any language; it is URL-escaped).
	Query string `json:"query,omitempty"`
	// Page is 1-based.
	Page int `json:"page,omitempty"`
	// Location is the Avito region slug ("moskva", "krasnodar"); default
	// "rossiya" (all of Russia).
	Location string `json:"location,omitempty"`
	// Category is a site category: an Ozon category slug
	// ("korm-dlya-koshek-12348"), an Avito category path
	// ("kvartiry/sdam"), or a Wildberries catalog "SHARD?QUERY"
	// ("beauty3?cat=9000").
	Category string `json:"category,omitempty"`
	// ID is the site's product or listing ID.
	ID string `json:"id,omitempty"`
	// URL is a pasted product or listing URL; its ID is extracted.
	URL string `json:"url,omitempty"`
}

// Page is what one fetched page yields.
type Page struct {
	Items []item.Item
	// Next is true when a listing page has a next page.
	Next bool
	// NextURL is the next page's URL when the site names it (Ozon's
	// nextPage, which carries a paginator token); empty: the kind's
	// Build of page+1. A retried job that lost it builds page+1.
	NextURL string
	// Follow are the product or item pages a listing page links to, in
	// page order, without duplicates.
	Follow []Target
}

// Target is a product or item page to crawl next.
type Target struct {
	Site string `json:"site"`
	Kind string `json:"kind"`
	ID   string `json:"id"`
	URL  string `json:"url"`
}

// Endpoint returns the base URL of the named endpoint: BaseURL when set,
// else the endpoint's own base URL, else the web endpoint.
func (s *Site) Endpoint(name string) string {
	if s.BaseURL != "" {
		return strings.TrimRight(s.BaseURL, "/")
	}
	if u, ok := s.Endpoints[name]; ok && u != "" {
		return strings.TrimRight(u, "/")
	}
	return strings.TrimRight(s.Endpoints[EndpointWeb], "/")
}

// Kind returns the named kind or an error wrapping ErrUnknownKind.
func (s *Site) Kind(name string) (Kind, error) {
	k, ok := s.Kinds[name]
	if !ok {
		return Kind{}, fmt.Errorf("site %s: %w %q (known: %s)", s.Name, ErrUnknownKind, name,
			strings.Join(s.KindNames(), ", "))
	}
	return k, nil
}

// KindNames lists the site's kinds, sorted.
func (s *Site) KindNames() []string {
	return sortedKeys(s.Kinds)
}

// Normalize validates r for the kind and returns its canonical form; the
// task layer derives a task ID from it.
func (s *Site) Normalize(kind string, r Request) (Request, error) {
	k, err := s.Kind(kind)
	if err != nil {
		return Request{}, err
	}
	return k.Normalize(s, r)
}

// URL validates r and returns the URL to fetch for it.
func (s *Site) URL(kind string, r Request) (string, error) {
	k, err := s.Kind(kind)
	if err != nil {
		return "", err
	}
	n, err := k.Normalize(s, r)
	if err != nil {
		return "", err
	}
	return k.Build(s, n), nil
}

// clone returns a copy of s whose maps may be changed freely.
func (s *Site) clone() *Site {
	c := *s
	c.Endpoints = maps.Clone(s.Endpoints)
	c.Kinds = maps.Clone(s.Kinds)
	c.APIs = maps.Clone(s.APIs)
	c.XHR.Paths = slices.Clone(s.XHR.Paths)
	c.XHR.Headers = slices.Clone(s.XHR.Headers)
	return &c
}
