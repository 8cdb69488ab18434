package tasks

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"crawlq/fetcher"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// PoWStats is one challenge solved over HTTP by the site's own Solve
// (Avito's proof of work), for metrics.
type PoWStats struct {
	Site   string
	Solved bool
	// Took runs from the solve's first request to its last answer: its
	// paced requests and the hashing.
	Took time.Duration
}

// clearHere clears the challenge session sess's last answer was with
// the site's Solve, over HTTP in that session: its proxy, cookies,
// profile and pacing; no browser, no ban. The clearance is kept for the
// session's exit IP like a browser's, until its cookie expires.
func (r *run) clearHere(ctx context.Context, sess *sessions.Session, s *site.Site) error {
	start := time.Now()
	err := s.Challenge.Solve(ctx, s, solveSession{sess: sess, f: r.h.cfg.Fetcher})
	took := time.Since(start)
	if f := r.h.cfg.OnPoW; f != nil {
		f(PoWStats{Site: r.job.Site, Solved: err == nil, Took: took})
	}
	if err != nil {
		r.log.Warn("proof of work not solved", zap.String("proxy", sess.ProxyID()), zap.Duration("took", took), zap.Error(err))
		return fmt.Errorf("site %s: through proxy %s: %w", r.job.Site, sess.Lease().Proxy.Masked(), err)
	}
	r.sum.ProofsOfWork++
	r.log.Debug("proof of work solved", zap.String("proxy", sess.ProxyID()), zap.Duration("took", took))
	r.saveClearance(ctx, sess, ttlUntil(sess.CookieExpires(s.Challenge.Cookie)))
	return nil
}

// solveSession is a job's session as a site.Solve uses it.
type solveSession struct {
	sess *sessions.Session
	f    *fetcher.Fetcher
}

var _ site.Session = solveSession{}

func (c solveSession) Cookie(rawURL, name string) string {
	for _, ck := range c.sess.CookiesFor(rawURL) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

func (c solveSession) PostJSON(ctx context.Context, rawURL string, body []byte) (int, []byte, error) {
	resp, err := c.sess.Post(ctx, c.f, rawURL, "application/json", body)
	if err != nil {
		return 0, nil, err
	}
	return resp.Status, resp.Body, nil
}

func (c solveSession) SetCookie(rawURL string, ck *http.Cookie) {
	if u, err := url.Parse(rawURL); err == nil {
		c.sess.Jar().SetCookies(u, []*http.Cookie{ck})
	}
}
