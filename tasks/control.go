package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// Kind is set on the unproven control only (its field names none).
	Kind string    `json:"kind,omitempty"`
	URL  string    `json:"url"`
	Page int       `json:"page"`
	At   time.Time `json:"at"`
}

// unprovenPrefix + URL is the hash field of a site's unproven control:
// one a witness was quarantined for (its answer came back empty) that no
// proxy has answered with items since. Every confirmation's second proxy
// on the site asks the oldest until one has its items
// (sessions.Control.Unproven), so a quarantine on a control always meets
// a check of the control. Those older than ControlFor are dropped when
// read.
const unprovenPrefix = "!unproven:"

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
	ctl, stale := pickControl(all, r.detectKind(), url, r.h.cfg.Now())
	if len(stale) > 0 {
		if err := r.h.cfg.Sink.Redis().HDel(ctx, controlKey(r.job.Site), stale...).Err(); err != nil {
			return sessions.Control{}, fmt.Errorf("drop old unproven controls of %s: %w", r.job.Site, err)
		}
	}
	return ctl, nil
}

// settleControl keeps ctl as the site's unproven control when the
// confirmation quarantined a witness on it and no later proxy answered
// it with items; it forgets the unproven one once a proxy has.
func (r *run) settleControl(ctx context.Context, ctl sessions.Control, c sessions.Confirmation) error {
	rdb, k := r.h.cfg.Sink.Redis(), controlKey(r.job.Site)
	var err error
	switch {
	case c.WitnessBans > 0 && !c.Corroborated:
		raw, jerr := json.Marshal(control{Kind: ctl.Kind, URL: ctl.URL, Page: ctl.Page, At: r.h.cfg.Now()})
		if jerr != nil {
			return jerr
		}
		_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, k, unprovenPrefix+ctl.URL, raw)
			p.PExpire(ctx, k, ControlFor)
			return nil
		})
	case ctl.Unproven && c.Corroborated:
		err = rdb.HDel(ctx, k, unprovenPrefix+ctl.URL).Err()
	}
	if err != nil {
		return fmt.Errorf("keep the unproven control of %s: %w", r.job.Site, err)
	}
	return nil
}

// pickControl picks from a site's controls (kind → JSON, and the
// unproven ones) the oldest unproven one, else the one of kind, else the
// most recent; none older than ControlFor at now, or asking url. stale
// are the fields of unproven controls past ControlFor (or unreadable).
func pickControl(all map[string]string, kind, url string, now time.Time) (ctl sessions.Control, stale []string) {
	var unproven, latest sessions.Control
	var unprovenAt, latestAt time.Time
	for k, raw := range all {
		var c control
		ok := json.Unmarshal([]byte(raw), &c) == nil && c.URL != "" && now.Sub(c.At) < ControlFor
		if strings.HasPrefix(k, unprovenPrefix) {
			switch {
			case !ok || c.Kind == "":
				stale = append(stale, k)
			case c.URL != url && (unprovenAt.IsZero() || c.At.Before(unprovenAt)):
				unproven, unprovenAt = sessions.Control{Kind: c.Kind, URL: c.URL, Page: c.Page, Unproven: true}, c.At
			}
			continue
		}
		if !ok || c.URL == url {
			continue
		}
		if k == kind {
			ctl = sessions.Control{Kind: k, URL: c.URL, Page: c.Page}
		}
		if c.At.After(latestAt) {
			latest, latestAt = sessions.Control{Kind: k, URL: c.URL, Page: c.Page}, c.At
		}
	}
	switch {
	case unproven.URL != "":
		return unproven, stale
	case ctl.URL != "":
		return ctl, stale
	}
	return latest, stale
}
