package tasks

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/results"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// page crawls one page of the job; more says whether a next page exists.
func (r *run) page(ctx context.Context, page int) (more bool, err error) {
	url, err := r.url(page)
	if err != nil {
		return false, permanent(err)
	}
	if err := r.session(ctx); err != nil {
		return false, err
	}
	url, step, err := r.get(ctx, url, page)
	if err != nil {
		return false, err
	}
	r.asked = url
	if step.Action == sessions.Retired || step.Action == sessions.Paused {
		r.sess = nil // released by the session with the verdict's outcome
	}
	if step.Verdict.Kind == detect.Suspect && r.sess != nil {
		return r.confirm(ctx, url, page, step)
	}
	if step.Verdict.Kind == detect.Challenge && r.sess != nil {
		return r.challenge(ctx, url, page, step.Verdict)
	}
	return r.verdict(ctx, page, step)
}

// fetch gets the page over HTTP, or in the browser for a site whose
// fetch policy is browser (on a worker that has one).
func (r *run) fetch(ctx context.Context, url string, page int) (sessions.Step, error) {
	if s, err := r.h.cfg.Sites.Get(r.job.Site); err == nil && s.FetchPolicy() == site.FetchBrowser && r.h.cfg.Browser != nil {
		return r.rendered(ctx, s, url, page)
	}
	return r.sess.Get(ctx, r.h.cfg.Fetcher, r.det, r.detectKind(), url, page)
}

func (r *run) observe(step sessions.Step) {
	r.sum.count(step.Verdict)
	var latency time.Duration
	if step.Response != nil {
		latency = step.Response.Latency
		r.latency = latency
	}
	if r.h.cfg.Observe != nil {
		r.h.cfg.Observe(r.job.Site, step.Verdict.Kind.String(), latency)
	}
	r.log.Debug("page", zap.String("proxy", r.sum.ProxyID), zap.Stringer("verdict", step.Verdict), zap.Duration("latency", latency))
}

// verdict acts on a judged page.
func (r *run) verdict(ctx context.Context, page int, step sessions.Step) (bool, error) {
	v := step.Verdict
	err := v.Err(r.job.Site, r.sum.Proxy)
	switch v.Kind {
	case detect.OK:
		return r.ok(ctx, page, step)
	case detect.NotFound:
		if page > 1 {
			return false, nil // past the last page
		}
		r.close(ctx, sessions.Outcome(v, 0))
		return false, permanent(err)
	case detect.Blocked:
		r.log.Warn("blocked", zap.String("proxy", r.sum.ProxyID), zap.String("rule", v.Rule))
		return false, retryAfter(time.Second, err) // banned: soon, on another proxy
	case detect.RateLimited:
		return false, retryAfter(max(v.RetryAfter, time.Second), err)
	case detect.ProxyFailure:
		r.close(ctx, sessions.Outcome(v, 0)) // penalty, and a new proxy next time
		return false, retryAfter(time.Second, err)
	case detect.Challenge:
		return false, retryAfter(challengeRetry, err) // never a ban (I7)
	case detect.RequestDefect:
		return false, r.defect(ctx, step)
	}
	return false, err // server error: back off
}

func (r *run) ok(ctx context.Context, page int, step sessions.Step) (bool, error) {
	p, err := r.parse(step)
	if err != nil {
		return r.unparsed(ctx, page, step, err, false)
	}
	return r.write(ctx, page, p)
}

// unparsed acts on a page the parser refused (err): a redirect stub is
// followed, an answer not recognized is an unknown shape (any refused
// answer, when agreed: two proxies gave it).
func (r *run) unparsed(ctx context.Context, page int, step sessions.Step, err error, agreed bool) (bool, error) {
	var stub *site.RedirectError
	switch {
	case errors.As(err, &stub):
		return r.redirect(ctx, page, step, stub)
	case agreed, errors.Is(err, site.ErrUnrecognized):
		return false, r.unknownShape(ctx, step, err, agreed)
	}
	return false, err
}

// write queues the page's follow-ups and writes its items, progress and
// session in one transaction.
func (r *run) write(ctx context.Context, page int, p site.Page) (bool, error) {
	if err := r.follow(ctx, p.Follow); err != nil {
		return false, err
	}
	also := append(r.storeSession(ctx, !p.Next || page >= r.job.Pages), r.recordFollows(ctx)...)
	also = append(also, r.recordControl(ctx, page, len(p.Items))...)
	err := r.h.cfg.Sink.WritePageOf(ctx, results.Origin{Task: r.task, Schedule: r.job.Schedule, Run: r.job.Run}, page, p.Items, also...)
	if err != nil {
		return false, err
	}
	r.sum.Pages, r.sum.Items = page, r.sum.Items+len(p.Items)
	r.next = p.NextURL
	return p.Next, nil
}

// storeSession is the session's part of the page's transaction, on a
// shared Redis: its record's write, so the cookies a retry resumes with
// land with the progress it resumes from; or, on the job's last page, the
// record's deletion. The record has the results' hash tag, so the
// transaction touches one Redis Cluster slot; the proxy's release (the
// broker's slot) follows it when the job closes its session.
func (r *run) storeSession(ctx context.Context, last bool) []func(redis.Pipeliner) error {
	s := r.sess
	if !r.h.shared || s == nil {
		return nil
	}
	return []func(redis.Pipeliner) error{func(p redis.Pipeliner) error { return s.StoreIn(ctx, p, last) }}
}

// discardStored gives back a lease preloaded with the progress that no
// session took (the job had no page left, or failed before opening one).
func (r *run) discardStored(ctx context.Context) {
	r.h.cfg.Sessions.Discard(ctx, r.preloaded.Lease)
	r.preloaded = sessions.Preloaded{}
}

// parse parses the step's answer with the job's parser (a page job's: its
// selectors); a product page without an item is ErrUnrecognized.
func (r *run) parse(step sessions.Step) (site.Page, error) {
	resp, now := step.Response, r.h.cfg.Now()
	if r.job.Kind == KindFetch {
		items, err := r.job.Fetch.extract(r.job.Site, resp.Body, resp.FinalURL, now)
		return site.Page{Items: items}, err
	}
	p, err := r.h.cfg.Sites.Parse(r.job.Site, r.job.Kind, resp.Body, resp.FinalURL, now)
	if err == nil && len(p.Items) == 0 && detect.NormalizeKind(r.job.Kind) == "product" {
		// a product or item page holds its item: without one it is an
		// unknown shape, never a page without items (issue 36.6)
		return site.Page{}, site.Unrecognized("no item in the %s page", r.job.Kind)
	}
	return p, err
}

// follow enqueues the product/item jobs of a listing page; a job already
// queued is refused by its task ID and counted as a duplicate.
func (r *run) follow(ctx context.Context, targets []site.Target) error {
	if !r.job.Follow {
		return nil
	}
	for _, t := range targets {
		task, q, err := r.followTask(t)
		if err != nil {
			r.log.Warn("follow target refused", zap.String("target", t.String()), zap.Error(err))
			continue
		}
		switch _, err := r.h.cfg.Client.EnqueueContext(ctx, task); {
		case err == nil:
			r.sum.Followed++
		case errors.Is(err, asynq.ErrTaskIDConflict):
			r.sum.Duplicates++
		default:
			return err
		}
		r.followed = append(r.followed, q)
	}
	return nil
}

// recordFollows is the page's follow-ups' write for its transaction.
func (r *run) recordFollows(ctx context.Context) []func(redis.Pipeliner) error {
	refs := r.followed
	r.followed = nil
	if len(refs) == 0 {
		return nil
	}
	return []func(redis.Pipeliner) error{func(p redis.Pipeliner) error {
		followsIn(ctx, p, r.task, refs)
		return nil
	}}
}

func (r *run) url(page int) (string, error) {
	if r.hop.page == page {
		return r.hop.url, nil // the URL the page's redirect stub named
	}
	if r.job.Kind == KindFetch {
		return r.job.Fetch.URL, nil
	}
	if r.next != "" && page > 1 {
		return r.next, nil
	}
	s, err := r.h.cfg.Sites.Get(r.job.Site)
	if err != nil {
		return "", err
	}
	req := r.job.Request
	req.Page = page
	return s.URL(r.job.Kind, req)
}

func (r *run) detectKind() string {
	if r.job.Kind == KindFetch {
		return "page"
	}
	return r.job.Kind
}
