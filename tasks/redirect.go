package tasks

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"go.uber.org/zap"

	"crawlq/internal/mask"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// hop is a page's redirect stub followed: the URL it named, asked for
// the page instead of the page's own.
type hop struct {
	page int
	url  string
}

// redirect follows the redirect stub a page was answered with
// (*site.RedirectError): the URL it names is asked once, in the same
// session (its proxy, cookies, profile and pacing), and its answer is
// the page's, judged and parsed as any. A stub that answers the URL a
// stub named, or one naming another host, fails the job with the reason
// and the answer kept: it is never stored as a page without items.
func (r *run) redirect(ctx context.Context, page int, step sessions.Step, stub *site.RedirectError) (bool, error) {
	from := step.Response.FinalURL
	if r.hop.page == page {
		err := fmt.Errorf("the page the redirect stub named (%s) is itself one: followed once only: %w", from, stub)
		return false, r.unknownShape(ctx, step, err, true)
	}
	to, err := hopURL(from, stub.To)
	if err != nil {
		return false, r.unknownShape(ctx, step, fmt.Errorf("%w: %w", err, stub), true)
	}
	r.hop = hop{page: page, url: to}
	r.sum.Redirects++
	r.log.Info("redirect stub followed", zap.Int("page", page), zap.String("from", from), zap.String("to", to))
	return r.page(ctx, page)
}

// errOffSite: a redirect stub names a URL on another host than its own.
var errOffSite = errors.New("redirect stub names another host")

// hopURL is the absolute URL a stub at from names (to, often a path):
// on from's own scheme and host only.
func hopURL(from, to string) (string, error) {
	base, err := url.Parse(from)
	if err != nil {
		return "", fmt.Errorf("redirect stub at %q: %w", from, err)
	}
	ref, err := url.Parse(to)
	if err != nil || to == "" {
		return "", fmt.Errorf("redirect stub at %s names no URL (%q)", from, to)
	}
	u := base.ResolveReference(ref)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("%w: %s names %s", errOffSite, from, mask.URL(u.String()))
	}
	return u.String(), nil
}
