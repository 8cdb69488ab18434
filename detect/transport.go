package detect

import (
	"context"
	"crawlq/internal/mask"
	"errors"
	"net/url"
	"os"
)

// proxyFaulter is implemented by fetcher errors that know whether the
// proxy, not the target, failed.
type proxyFaulter interface{ ProxyFault() bool }

// redirectStopper is implemented by the fetcher's error for a redirect it
// stopped following (too many in a row).
type redirectStopper interface{ TooManyRedirects() bool }

// timeouter is implemented by net.Error and url.Error.
type timeouter interface{ Timeout() bool }

// judgeErr judges a transport error. Every transport error is a
// ProxyFailure (a failure count, never a ban): a target timeout says
// nothing about the proxy being banned.
func judgeErr(err error) Verdict {
	v := Verdict{Kind: ProxyFailure, Rule: "error: " + mask.Text(err.Error())}
	var pf proxyFaulter
	proxyFault := errors.As(err, &pf) && pf.ProxyFault()
	switch {
	case proxyFault && isTimeout(err):
		v.Reason = "proxy timeout"
	case proxyFault:
		v.Reason = "proxy fault"
	case isTimeout(err):
		v.Reason = "timeout"
	default:
		v.Reason = "transport error"
	}
	return v
}

// isTimeout tells whether err is a deadline or timeout.
func isTimeout(err error) bool {
	var t timeouter
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &t) && t.Timeout())
}

// redirectLoop judges a redirect the client stopped following (too many
// redirects) whose last target matches the URL patterns Blocked: a site
// that redirects a refused client in a loop (Ozon's 307 to ?__rr=1,
// ?__rr=2, …) has answered, and no proxy failed.
func (c *compiled) redirectLoop(err error) (Verdict, bool) {
	var ue *url.Error
	var rs redirectStopper
	if !errors.As(err, &ue) || !errors.As(ue.Err, &rs) || !rs.TooManyRedirects() {
		return Verdict{}, false
	}
	if p, ok := c.captchaURL(&Response{FinalURL: ue.URL}); ok {
		return Verdict{Kind: Blocked, Reason: "redirect loop", Rule: "url " + p}, true
	}
	return Verdict{}, false
}
