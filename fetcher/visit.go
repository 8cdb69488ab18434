package fetcher

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// ErrNotCleared means the challenge had not cleared when the solve's
// timeout ended it.
var ErrNotCleared = errors.New("challenge not cleared")

// BrowserJob is one visit of a real browser for a session: a challenge
// to clear, or a page to render. The browser tier (fetcher/browser)
// runs it; its callers need only this package.
type BrowserJob struct {
	// URL is the page the browser opens (the challenged page, or the
	// site's page whose script mints the token).
	URL string
	// Proxy is the session's leased proxy, with its credentials (http or
	// https; Chromium does not authenticate to socks5 proxies).
	Proxy *url.URL
	// UserAgent and AcceptLanguage are the session's.
	UserAgent, AcceptLanguage string
	// Cookies are the session's cookies for URL.
	Cookies []*http.Cookie
	// SiteHosts are the hosts (host[:port], as in a URL) that are the
	// site: its anti-bot counts their requests. Default: URL's host.
	// Requests to other hosts (the site's CDNs) go out through the same
	// proxy without the gate.
	SiteHosts []string
	// Skip, when not nil, replaces the browser's configured Skip for this visit: the
	// request kinds refused without reaching the network.
	Skip []string
	// Gate is called before each request to the site is let through (a
	// page, script, XHR, ...): it waits until the session may send (I2)
	// and marks the request sent. Required.
	Gate func(ctx context.Context) error
	// Done, if set, is called when an answer (or failure) of the site
	// arrives, one for each request Gate let through.
	Done func()
	// Settled, if set, is called once the browser context has closed: no
	// request of the solve is in flight any more.
	Settled func()
	// Clearance is the clearance cookie's name; when set, the challenge
	// has cleared only once the cookie is there.
	Clearance string
	// Cleared, if set, judges each page answer: true when it is no longer
	// the challenge. The challenge has cleared only once the last page
	// answer is.
	Cleared func(status int, body []byte) bool
	// Render hands back the page after its scripts ran (Result.DOM): once
	// cleared, the visit waits until one of WaitFor (CSS selectors)
	// matches, or without WaitFor until the network has been quiet
	// (nothing asked for 500 ms), and reads the DOM.
	Render  bool
	WaitFor []string
	// CookieSuffices ends the solve as soon as a new Clearance cookie is
	// set (one that is not among Cookies), without the page the
	// challenge's script then reloads: the caller asks that page over HTTP
	// anyway, and the site judges the cookie there. It saves the reload's
	// request; a site that only accepts the cookie after the reload
	// challenges the HTTP request again, and the caller's next solve goes
	// without it.
	CookieSuffices bool
}

// BrowserResult is what a browser visit did.
type BrowserResult struct {
	// Cookies are every cookie of the browser context at the end. Domain
	// holds the cookie's domain as the browser keeps it: with a leading
	// dot for a domain cookie, the bare host for a host-only one.
	Cookies []*http.Cookie
	// Requests counts the requests let through to the site (all paced by
	// Gate), Elsewhere those let through to other hosts (the site's
	// CDNs, through the same proxy); Blocked the requests refused without
	// reaching the network (the kinds skipped).
	Requests, Elsewhere, Blocked int
	// Loaded counts the requests let through by kind (the browser tier's request kinds: document, script, xhr, ...), the
	// site's and other hosts' together; Skipped the refused ones by kind.
	Loaded, Skipped map[string]int
	// Status, URL and Body are the last page answer's (Body only when
	// the job has a Cleared judge, which reads it).
	Status int
	URL    string
	Body   []byte
	// DOM is the page as its scripts left it (BrowserJob.Render).
	DOM []byte
	// Took is how long the solve ran.
	Took time.Duration
}

// ErrNotRendered means a page to render showed none of BrowserJob.WaitFor
// (or its network never went quiet) before the solve's timeout.
var ErrNotRendered = errors.New("page not rendered")
