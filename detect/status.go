package detect

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// judgeStatus judges by status code and URL; done is false for a 2xx
// whose body must be looked at.
func (d *Detector) judgeStatus(c *compiled, r *Response) (Verdict, bool) {
	st := r.Status
	v := Verdict{Status: st, Rule: fmt.Sprintf("status %d", st)}
	switch {
	case c.rateStatus(st):
		if b, banned := c.markerHit(r.Body); banned {
			// The site says why it refuses, and it is a ban (Avito's 429
			// "Доступ ограничен: проблема с IP"): waiting does not help.
			b.Reason, b.Status = "block page at a rate-limit status", st
			return b, true
		}
		v.Kind, v.Reason, v.RetryAfter = RateLimited, "rate limited", d.retryAfter(r.Header)
	case c.defectStatus(st):
		if b, banned := c.markerHit(r.Body); banned {
			b.Reason, b.Status = "block page at a defect status", st
			return b, true
		}
		v.Kind, v.Reason = RequestDefect, "request defect"
	case c.blockStatus(st):
		v.Kind, v.Reason = Blocked, "blocked status"
	default:
		if u, ok := c.captchaURL(r); ok {
			return Verdict{Kind: Blocked, Reason: "captcha or login redirect", Rule: "url " + u, Status: st}, true
		}
		return otherStatus(v)
	}
	return v, true
}

// otherStatus judges a status that is neither a block nor a rate limit.
func otherStatus(v Verdict) (Verdict, bool) {
	switch st := v.Status; {
	case st == http.StatusNotFound || st == http.StatusGone:
		v.Kind, v.Reason = NotFound, "page gone"
	case st >= 500:
		v.Kind, v.Reason = ServerError, "server error"
	case st >= 200 && st < 300:
		return v, false
	default:
		v.Kind, v.Reason = ServerError, "unexpected status"
	}
	return v, true
}

// captchaURL matches the final URL, and the Location of an unfollowed
// redirect, against the URL patterns; it returns the matching URL's path
// and query.
func (c *compiled) captchaURL(r *Response) (string, bool) {
	urls := []string{r.FinalURL}
	if r.Status >= 300 && r.Status < 400 && r.Header != nil {
		urls = append(urls, r.Header.Get("Location"))
	}
	for _, u := range urls {
		for _, re := range c.urls {
			if u != "" && re.MatchString(u) {
				return pathOf(u), true
			}
		}
	}
	return "", false
}

// pathOf shortens a URL to its path and query for evidence.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" && u.RawQuery == "" {
		return raw
	}
	return u.RequestURI()
}

// retryAfter parses Retry-After as seconds or an HTTP date; 0 if absent,
// malformed or in the past.
func (d *Detector) retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return max(t.Sub(d.now()).Round(time.Second), 0)
}

// pageOf is the listing page number: r.Page, else FinalURL's "page" or
// "p" query parameter, else 1.
func pageOf(r *Response) int {
	if r.Page > 0 {
		return r.Page
	}
	u, err := url.Parse(r.FinalURL)
	if err != nil {
		return 1
	}
	for _, name := range []string{"page", "p"} {
		if n, err := strconv.Atoi(u.Query().Get(name)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}
