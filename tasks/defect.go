package tasks

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/sessions"
)

// DefectStats is one request defect: a site refused a request as crawlq
// sent it (detect.RequestDefect), not the proxy it came through.
type DefectStats struct {
	Site string
	// Kind is the job's kind (search, product, card…): which endpoint.
	Kind string
	// Reason is the rule that judged it ("status 403").
	Reason string
	// Endpoint is the refused URL without its query.
	Endpoint string
}

// defects remembers the (site, kind, reason) a worker has warned about:
// the first request defect of each is a warning, the rest debug lines.
type defects struct{ warned sync.Map }

// first reports whether d has not seen s's site, kind and reason yet.
func (d *defects) first(s DefectStats) bool {
	_, seen := d.warned.LoadOrStore(s.Site+"\x00"+s.Kind+"\x00"+s.Reason, true)
	return !seen
}

// defectReason says what the site refused and where, and what to do.
func defectReason(siteName string, v detect.Verdict, endpoint string) string {
	return fmt.Sprintf("%s refused the request to %s (%s): a request defect, not a ban: "+
		"its headers are not what the site's page sends there (xhr_headers, docs/sites.md)", siteName, endpoint, v.Rule)
}

// endpointOf is rawURL without its query and fragment.
func endpointOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// defect acts on a RequestDefect: no proxy is punished (the session is
// closed neutrally), the defect is counted and logged (a warning the
// first time per site, kind and reason in this worker), and the job
// fails at once: asking again, from any proxy, gets the same answer.
func (r *run) defect(ctx context.Context, step sessions.Step) error {
	v, at := step.Verdict, ""
	if step.Response != nil {
		at = step.Response.FinalURL
	}
	d := DefectStats{Site: r.job.Site, Kind: r.job.Kind, Reason: v.Rule, Endpoint: endpointOf(at)}
	reason := defectReason(d.Site, v, d.Endpoint)
	log := r.log.Debug
	if r.h.defects.first(d) {
		log = r.log.Warn
	}
	log("request defect", zap.String("endpoint", d.Endpoint), zap.String("rule", v.Rule), zap.String("reason", reason))
	if f := r.h.cfg.OnDefect; f != nil {
		f(d)
	}
	r.close(ctx, sessions.Outcome(v, 0))
	return permanent(fmt.Errorf("%s: %w", reason, v.Err(r.job.Site, r.sum.Proxy)))
}
