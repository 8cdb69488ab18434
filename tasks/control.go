package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/results"
	"crawlq/sessions"
)

// ControlFor is how long a page a site answered with items stays the
// site's control: the request a confirmation's witness asks after
// agreeing with an empty answer, to show it is no soft-banned IP itself
// (sessions.Control, issue 36.8). Every page written with items renews
// it; a control older than this may have lost its items meanwhile, so an
// agreement on a site with none this recent counts as it is.
const ControlFor = 10 * time.Minute

// controlPrefix + site is a hash of the site's controls: page kind → the
// JSON of a control (the last page of that kind answered with items). It
// has the results stream's hash tag: a page with items renews it in its
// own transaction. It expires ControlFor after its last write.
const controlPrefix = results.JobsTag + "control:"

// controlKey is the hash of site's controls.
func controlKey(site string) string { return controlPrefix + site }

// control is one page answered with items, as kept in the hash.
type control struct {
	URL  string    `json:"url"`
	Page int       `json:"page"`
	At   time.Time `json:"at"`
}

// recordControl is the page's part in its site's controls: a page with
// items (of a site kind, not a page job's fetch) is the control of its
// kind from now.
func (r *run) recordControl(ctx context.Context, page, items int) []func(redis.Pipeliner) error {
	if items == 0 || r.asked == "" || r.job.Kind == KindFetch {
		return nil
	}
	raw, err := json.Marshal(control{URL: r.asked, Page: page, At: r.h.cfg.Now()})
	if err != nil {
		return nil
	}
	k, kind := controlKey(r.job.Site), r.detectKind()
	return []func(redis.Pipeliner) error{func(p redis.Pipeliner) error {
		p.HSet(ctx, k, kind, raw)
		p.PExpire(ctx, k, ControlFor)
		return nil
	}}
}

// control is the control a witness of an empty answer to url asks: the
// site's control of the job's kind, else its most recent of another
// kind, younger than ControlFor and not url itself (the request being
// confirmed); the zero Control when there is none.
func (r *run) control(ctx context.Context, url string) (sessions.Control, error) {
	all, err := r.h.cfg.Sink.Redis().HGetAll(ctx, controlKey(r.job.Site)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return sessions.Control{}, fmt.Errorf("read the controls of %s: %w", r.job.Site, err)
	}
	return pickControl(all, r.detectKind(), url, r.h.cfg.Now()), nil
}

// pickControl picks from a site's controls (kind → JSON) the one of kind,
// else the most recent; none older than ControlFor at now, or asking url.
func pickControl(all map[string]string, kind, url string, now time.Time) sessions.Control {
	var best sessions.Control
	var bestAt time.Time
	for k, raw := range all {
		var c control
		if json.Unmarshal([]byte(raw), &c) != nil || c.URL == "" || c.URL == url || now.Sub(c.At) >= ControlFor {
			continue
		}
		if k == kind {
			return sessions.Control{Kind: k, URL: c.URL, Page: c.Page}
		}
		if c.At.After(bestAt) {
			best, bestAt = sessions.Control{Kind: k, URL: c.URL, Page: c.Page}, c.At
		}
	}
	return best
}
