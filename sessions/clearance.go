package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/fetcher"
)

// clearance is what a browser's solve leaves for the other sessions of
// the same proxy on the same site: a site's clearance is bound to the IP
// and the browser (User-Agent), not to one session, and is reusable until
// it expires (Wildberries' x_wbaas_token: about 7 days).
type clearance struct {
	Browser fetcher.Profile `json:"browser"`
	Cookies []storedCookie  `json:"cookies"`
}

// SaveClearance keeps the session's cookies and profile for its proxy and
// site for ttl, so the next session of this proxy that meets the site's
// challenge reuses them, on any server, instead of a browser visit. When
// the broker can (Caps.Clearances), the proxy is marked cleared
// too: the site's next leases take it first.
func (s *Session) SaveClearance(ctx context.Context, ttl time.Duration) error {
	s.mu.Lock()
	c := clearance{Browser: s.profile, Cookies: s.jar.snapshot()}
	site, proxy, exit := s.rec.Site, s.lease.Proxy.ID, s.hold != nil
	s.mu.Unlock()
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := s.m.cfg.Redis.Set(ctx, clearanceKey(site, s.clearanceOwner()), raw, ttl).Err(); err != nil {
		return fmt.Errorf("save clearance: %w", err)
	}
	if cm := s.m.cfg.Caps.Clearances; cm != nil && !exit { // a gateway slot's exit moves
		return cm.MarkCleared(ctx, site, proxy, ttl)
	}
	return nil
}

// LoadClearance gives the session the clearance kept for its proxy and
// site, if any: the profile of the browser that got it (the clearance is
// bound to it) and its cookies. It reports whether there was one.
func (s *Session) LoadClearance(ctx context.Context) (bool, error) {
	raw, err := s.m.cfg.Redis.Get(ctx, clearanceKey(s.rec.Site, s.clearanceOwner())).Bytes()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("load clearance: %w", err)
	}
	var c clearance
	if json.Unmarshal(raw, &c) != nil || c.Browser.IsZero() {
		return false, nil // a corrupt clearance is ignored
	}
	s.AdoptProfile(c.Browser)
	for _, sc := range c.Cookies {
		if sc.Expires.IsZero() || sc.Expires.After(time.Now()) {
			s.jar.setStored(sc)
		}
	}
	return true, nil
}

// DropClearance forgets the clearance of the session's proxy and site (a
// reused one was refused), and its mark in the broker.
func (s *Session) DropClearance(ctx context.Context) error {
	if err := s.m.cfg.Redis.Del(ctx, clearanceKey(s.rec.Site, s.clearanceOwner())).Err(); err != nil {
		return err
	}
	if cm := s.m.cfg.Caps.Clearances; cm != nil {
		return cm.ForgetCleared(ctx, s.rec.Site, s.ProxyID())
	}
	return nil
}

// CookieExpires is when the session's cookie named name expires (the
// latest, if several hosts hold one); zero when it holds none, or only a
// session cookie.
func (s *Session) CookieExpires(name string) time.Time {
	var t time.Time
	for _, c := range s.jar.snapshot() {
		if c.Name == name && c.Expires.After(t) {
			t = c.Expires
		}
	}
	return t
}
