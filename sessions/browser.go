package sessions

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"crawlq/fetcher"
)

// Gate is the session's politeness for a request it does not send itself
// (the browser tier's): it waits for Pace, admits it (admit) and marks the request sent, so
// the next request of the session, browser's or HTTP's, starts at least
// the site's min_interval later (I2). The browser runs under the
// session's lease (I1).
//
// A request past Gate is in flight until Answered (or Settled): where it
// starts at the site is not known before, so no other request of the
// session is let through meanwhile.
func (s *Session) Gate(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight++
	s.lastDone = time.Now()
	if s.rec.Exit != nil {
		s.rec.Exit.Last = s.lastDone
	}
	return nil
}

// Answered marks an answer to a request sent past Gate: the next request
// waits min_interval from now.
func (s *Session) Answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight = max(s.inflight-1, 0)
	s.lastDone = time.Now()
}

// Settled marks the browser's end (its context closed): no request of
// it is in flight any more; the next request waits min_interval from now.
func (s *Session) Settled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight = 0
	s.lastDone = time.Now()
}

// AdoptProfile makes p the session's profile from now on (stored with the
// session): the browser that cleared a challenge must be the browser the
// session claims to be, since the clearance is bound to its User-Agent
// (I8).
func (s *Session) AdoptProfile(p fetcher.Profile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profile = p
	s.rec.Browser = &p
	s.rec.Profile = p.Name
}

// ForgetCookie deletes the session's cookies named name (a clearance
// cookie the site has just refused), on every host and path.
func (s *Session) ForgetCookie(name string) { s.jar.forget(name) }

// CookiesFor are the session's cookies for rawURL, for the browser.
func (s *Session) CookiesFor(rawURL string) []*http.Cookie {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	return s.jar.Cookies(u)
}

// AddBrowserCookies puts cookies a browser kept into the session's jar
// (stored with the session as every cookie is). Domain is as the browser
// keeps it: a leading dot for a domain cookie, else the cookie's host;
// scheme is the page's.
func (s *Session) AddBrowserCookies(scheme string, cookies []*http.Cookie) {
	for _, c := range cookies {
		host := strings.TrimPrefix(c.Domain, ".")
		if host == "" {
			continue
		}
		cc := *c
		if !strings.HasPrefix(c.Domain, ".") {
			cc.Domain = "" // host-only
		}
		s.jar.SetCookies(&url.URL{Scheme: scheme, Host: host, Path: "/"}, []*http.Cookie{&cc})
	}
}
