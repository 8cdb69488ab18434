package detect

import (
	"crawlq/internal/mask"
	"errors"
	"fmt"
	"time"
)

// Sentinels every verdict error wraps; check with errors.Is.
var (
	// ErrBlocked is wrapped by *BlockedError.
	ErrBlocked = errors.New("blocked")
	// ErrRateLimited is wrapped by *RateLimitedError.
	ErrRateLimited = errors.New("rate limited")
	// ErrProxyFailure is wrapped by the error of a ProxyFailure verdict.
	ErrProxyFailure = errors.New("proxy failure")
	// ErrNotFound is wrapped by the error of a NotFound verdict.
	ErrNotFound = errors.New("page not found")
	// ErrServerError is wrapped by the error of a ServerError verdict.
	ErrServerError = errors.New("server error")
	// ErrChallenge is wrapped by the error of a Challenge verdict: the page
	// is behind a JavaScript challenge no browser has cleared.
	ErrChallenge = errors.New("js challenge")
	// ErrRequestDefect is wrapped by the error of a RequestDefect verdict:
	// the site refused the request as sent (its headers), not the proxy.
	ErrRequestDefect = errors.New("request defect")
)

// BlockedError says a site blocked a proxy. Proxy is masked (user:***).
type BlockedError struct {
	Site   string
	Proxy  string
	Reason string
	// Rule is the evidence (see Verdict.Rule).
	Rule string
}

// Error describes the block with its evidence.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("site %s: proxy %s: blocked: %s (%s)", e.Site, e.Proxy, e.Reason, e.Rule)
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// RateLimitedError says a site asked a proxy to slow down.
type RateLimitedError struct {
	Site  string
	Proxy string
	// RetryAfter is the site's Retry-After, 0 if it gave none.
	RetryAfter time.Duration
	Rule       string
}

// Error describes the rate limit.
func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("site %s: proxy %s: rate limited, retry after %s (%s)", e.Site, e.Proxy, e.RetryAfter, e.Rule)
}

// Unwrap returns ErrRateLimited.
func (e *RateLimitedError) Unwrap() error { return ErrRateLimited }

// Err turns the verdict into an error for callers: nil for OK, a
// *BlockedError for Blocked, a *RateLimitedError for RateLimited, and an
// error wrapping ErrProxyFailure, ErrNotFound or ErrServerError otherwise.
// proxy should already be masked; a password in it is masked anyway.
func (v Verdict) Err(site, proxy string) error {
	proxy = mask.URL(proxy)
	switch v.Kind {
	case OK:
		return nil
	case Blocked:
		return &BlockedError{Site: site, Proxy: proxy, Reason: v.Reason, Rule: v.Rule}
	case RateLimited:
		return &RateLimitedError{Site: site, Proxy: proxy, RetryAfter: v.RetryAfter, Rule: v.Rule}
	}
	return fmt.Errorf("site %s: proxy %s: %s (%s): %w", site, proxy, v.Reason, v.Rule, v.sentinel())
}

// sentinel is the error a non-ban verdict kind wraps.
func (v Verdict) sentinel() error {
	switch v.Kind {
	case ProxyFailure:
		return ErrProxyFailure
	case NotFound:
		return ErrNotFound
	case ServerError:
		return ErrServerError
	case Challenge:
		return ErrChallenge
	case RequestDefect:
		return ErrRequestDefect
	}
	return fmt.Errorf("invalid verdict kind %d", uint8(v.Kind))
}
