package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
)

// keptTTL is how long a Suspect answer a confirmation deferred waits for
// the task's next attempt to decide it (Confirm).
const keptTTL = 2 * time.Minute

// keptAnswer is a Suspect answer whose confirmation found no second proxy
// free in time: the task's next attempt, on another proxy, compares its
// own answer to the same request with it.
type keptAnswer struct {
	URL     string         `json:"url"`
	Page    int            `json:"page"`
	ProxyID string         `json:"proxy_id"`
	Verdict detect.Verdict `json:"verdict"`
	At      time.Time      `json:"at"`
}

// keep stores a for task's next attempt, replacing any answer kept before.
func (m *Manager) keep(ctx context.Context, task string, a keptAnswer) error {
	raw, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode kept answer of %s: %w", task, err)
	}
	if err := m.cfg.Redis.Set(context.WithoutCancel(ctx), keptKey(task), raw, keptTTL).Err(); err != nil {
		return fmt.Errorf("keep the suspect answer of %s: %w", task, err)
	}
	return nil
}

// kept reads the answer kept for task; nil when there is none (or it is
// unreadable: it is then no evidence).
func (m *Manager) kept(ctx context.Context, task string) (*keptAnswer, error) {
	raw, err := m.cfg.Redis.Get(ctx, keptKey(task)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the kept answer of %s: %w", task, err)
	}
	var a keptAnswer
	if json.Unmarshal(raw, &a) != nil {
		return nil, nil
	}
	return &a, nil
}

// agreesWithKept settles first, this session's Suspect answer to url, on
// an answer kept for the task by an earlier attempt's deferred
// confirmation (ok true) when that answer came from another proxy to the
// same request and agrees with first (detect.Decide): two IPs gave the
// same answer, so it is true, and the kept answer is used up. With a
// control, this session is the later witness and asks it first (vouch):
// a control that came back without items leaves the kept answer kept and
// ends this session (quarantined when it was empty), undecided (ok true).
// Otherwise (none kept, another request, the same proxy, or no
// agreement) ok is false and the caller asks a second proxy.
func (s *Session) agreesWithKept(ctx context.Context, f *fetcher.Fetcher, d *detect.Detector, url string, page int, first Step, ctl Control, clear Clearer) (c Confirmation, ok bool, err error) {
	a, err := s.m.kept(ctx, s.rec.Task)
	if err != nil || a == nil || a.URL != url || a.Page != page || a.ProxyID == s.ProxyID() {
		return Confirmation{}, false, err
	}
	if detect.Decide(first.Verdict, a.Verdict) != detect.Agreed {
		return Confirmation{}, false, nil
	}
	c = Confirmation{Decision: detect.Agreed, Second: Step{Verdict: a.Verdict, Action: Retired},
		SecondProxy: proxies.Proxy{ID: a.ProxyID}, Kept: true, Action: Continue}
	if !ctl.none() {
		vouched, banned, n, err := s.vouch(ctx, f, d, ctl, clear)
		c.Requests, c.Controls = n, 1
		if err != nil {
			return Confirmation{}, false, err
		}
		if !vouched {
			if banned {
				c.WitnessBans = 1
			}
			c.Decision, c.Action = detect.Undecided, Retired
			return c, true, nil
		}
		c.Corroborated = ctl.Unproven
	}
	if err := s.m.cfg.Redis.Del(ctx, keptKey(s.rec.Task)).Err(); err != nil {
		return Confirmation{}, false, fmt.Errorf("use the kept answer of %s: %w", s.rec.Task, err)
	}
	return c, true, nil
}

// deferTo keeps first for the task's next attempt and ends this session
// without judgement: its proxy goes back to the pool at once (neutral,
// ready after the site's min_interval), so a confirmation never keeps a
// proxy from the other jobs while it waits for a second one; the stored
// session is dropped, so the next attempt asks another proxy, whose
// answer decides this one (agreesWithKept).
func (s *Session) deferTo(ctx context.Context, c Confirmation, url string, page int, first Step) (Confirmation, error) {
	c.Decision, c.Action, c.Deferred = detect.Undecided, Retired, true
	err := s.m.keep(ctx, s.rec.Task, keptAnswer{URL: url, Page: page, ProxyID: s.ProxyID(), Verdict: first.Verdict, At: time.Now()})
	return c, errors.Join(err, s.end(ctx, proxies.Neutral(), true))
}
