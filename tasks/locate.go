package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"crawlq/detect"
	"crawlq/sessions"
	"crawlq/tasks/site"
)

// errProbeStopped: a candidate's answer was neither the page nor "not
// found", or the session ended; the job acts on that answer.
var errProbeStopped = errors.New("probe stopped")

// errProbeCut: the session ended on a "not found" before every candidate
// was asked, so nothing is known yet; the next attempt probes again.
var errProbeCut = errors.New("probe cut short: the session ended")

// probed is the last candidate a locator asked and its answer.
type probed struct {
	url  string
	step sessions.Step
}

// get fetches the page at url, or, for a kind whose site locates its URL
// (site.Kind.Locate), where the locator finds it. Every answer is
// observed; it returns the URL of the answer the job acts on.
func (r *run) get(ctx context.Context, url string, page int) (string, sessions.Step, error) {
	if s, k, ok := r.locator(); ok {
		return r.locate(ctx, s, k, page)
	}
	step, err := r.fetch(ctx, url, page)
	if err == nil {
		r.observe(step)
	}
	return url, step, err
}

// locator is the job's site and kind when the kind has a Locate.
func (r *run) locator() (*site.Site, site.Kind, bool) {
	if r.job.Kind == KindFetch {
		return nil, site.Kind{}, false
	}
	s, err := r.h.cfg.Sites.Get(r.job.Site)
	if err != nil {
		return nil, site.Kind{}, false
	}
	k, err := s.Kind(r.job.Kind)
	return s, k, err == nil && k.Locate != nil
}

// locate runs the kind's Locate with candidates asked through the job's
// session and returns the last answer: the page, the last "not found"
// when no candidate has it (NotFound, no retry), or the answer that
// stopped the probe (acted on as any page's).
func (r *run) locate(ctx context.Context, s *site.Site, k site.Kind, page int) (string, sessions.Step, error) {
	var last probed
	ask := site.Ask{Probe: r.probe(page, &last), Read: r.read(page, &last)}
	_, err := k.Locate(ctx, s, r.job.Request, r.h.memory(s.Name, k.Name), ask)
	switch {
	case last.url == "":
		return "", sessions.Step{}, err
	case err == nil, errors.Is(err, site.ErrNotLocated):
		return last.url, last.step, nil
	case last.step.Verdict.Kind == detect.OK:
		r.log.Warn("located page not remembered", zap.String("url", last.url), zap.Error(err))
		return last.url, last.step, nil
	case errors.Is(err, errProbeStopped) && last.step.Verdict.Kind == detect.NotFound:
		r.sess = nil // ended by the session itself
		return "", sessions.Step{}, retryAfter(time.Second, fmt.Errorf("%s: %w", last.url, errProbeCut))
	case errors.Is(err, errProbeStopped):
		return last.url, last.step, nil
	}
	return "", sessions.Step{}, err
}

// probe is the site.Probe of the job's page: each candidate a request of
// the job's session, paced (I2) through its leased proxy (I1), observed
// and judged as a page of the kind; last keeps the latest answer.
func (r *run) probe(page int, last *probed) site.Probe {
	return func(ctx context.Context, url string) (bool, error) {
		step, err := r.fetch(ctx, url, page)
		if err != nil {
			return false, err
		}
		r.observe(step)
		*last = probed{url: url, step: step}
		switch {
		case step.Verdict.Kind == detect.OK:
			return true, nil
		case step.Verdict.Kind == detect.NotFound && step.Action == sessions.Continue:
			return false, nil
		}
		return false, errProbeStopped
	}
}

// read is the site.Read of the job's page: a request of the job's
// session as probe's, whose body is returned when it is a page; an
// answer neither a page nor "not found" is kept in last for the job to
// act on.
func (r *run) read(page int, last *probed) site.Read {
	return func(ctx context.Context, url string) ([]byte, bool, error) {
		step, err := r.fetch(ctx, url, page)
		if err != nil {
			return nil, false, err
		}
		r.observe(step)
		switch {
		case step.Verdict.Kind == detect.OK && step.Response != nil:
			return step.Response.Body, true, nil
		case step.Verdict.Kind == detect.NotFound && step.Action == sessions.Continue:
			return nil, false, nil
		}
		*last = probed{url: url, step: step}
		return nil, false, errProbeStopped
	}
}

// memory is what the kind's Locate keeps for the cluster: a Redis hash
// on the sessions' Redis, which every worker shares.
func (h *Handler) memory(siteName, kind string) site.Memory {
	return redisMemory{rdb: h.cfg.Sessions.Redis(), key: MemoryKey(siteName, kind)}
}

// MemoryKey is the Redis hash of what a site's kind locates (Wildberries
// card: vol -> basket host number, and "top").
func MemoryKey(siteName, kind string) string { return "crawlq:" + siteName + ":located:" + kind }

// redisMemory is a site.Memory in one Redis hash.
type redisMemory struct {
	rdb redis.UniversalClient
	key string
}

var _ site.Memory = redisMemory{}

// Recall implements site.Memory.
func (m redisMemory) Recall(ctx context.Context, field string) (string, bool, error) {
	v, err := m.rdb.HGet(ctx, m.key, field).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("recall %s %s: %w", m.key, field, err)
	}
	return v, true, nil
}

// Remember implements site.Memory.
func (m redisMemory) Remember(ctx context.Context, field, value string) error {
	if err := m.rdb.HSet(ctx, m.key, field, value).Err(); err != nil {
		return fmt.Errorf("remember %s %s: %w", m.key, field, err)
	}
	return nil
}
