package testbed

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// guard holds the anti-bot state of every site: per (site, IP) the last
// request start and ban, the sessions issued, and where each IP was last
// seen. One guard serves all sites so the cross-site rule can see them all.
type guard struct {
	mu       sync.Mutex
	rules    map[string]SiteRules
	ips      map[siteIP]*ipState
	sessions map[string]string // session value -> IP it was issued to
	seen     map[string]map[string]time.Time
	rng      *rand.Rand
	// volumeLog are the volume rules' changes (Testbed.SetVolume).
	volumeLog []VolumeChange
	// hiddenLog is every setting of a hidden gap (hidden.go).
	hiddenLog []HiddenChange
}

type siteIP struct{ site, ip string }

type ipState struct {
	last        time.Time
	bannedUntil time.Time
	forever     bool
	// recent are the request starts the volume rule counts.
	recent volumeWindow
	// limitedUntil is the end of the last hidden-gap 429's Retry-After,
	// strikes the recent 429s (hidden.go).
	limitedUntil time.Time
	strikes      []time.Time
}

// banned reports whether the state bans at now.
func (s *ipState) banned(now time.Time) bool {
	return s.forever || now.Before(s.bannedUntil)
}

func newGuard(rules map[string]SiteRules, seed int64) *guard {
	own := make(map[string]SiteRules, len(rules)) // SetHiddenGap changes the guard's, under mu
	for k, v := range rules {
		own[k] = v
	}
	return &guard{
		rules: own, ips: map[siteIP]*ipState{}, sessions: map[string]string{},
		seen: map[string]map[string]time.Time{},
		rng:  rand.New(rand.NewPCG(uint64(seed), 0x5e55)),
	}
}

// judge decides about a request from ip to site at now carrying session
// (empty when none) and records it.
func (g *guard) judge(site, ip, session string, now time.Time) Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.rules[site]
	st := g.state(site, ip)
	v := g.decide(site, ip, session, now, r, st)
	st.last = now
	g.see(ip, site, now)
	return v
}

func (g *guard) decide(site, ip, session string, now time.Time, r SiteRules, st *ipState) Verdict {
	if st.banned(now) {
		return VerdictBanned
	}
	if v := g.hidden(r.Hidden, st, now, r); v != "" {
		return v
	}
	switch {
	case r.MinInterval > 0 && !st.last.IsZero() && now.Sub(st.last) < r.MinInterval:
		g.ban(st, r, now)
		return VerdictTooFast
	case r.Volume != nil && st.recent.add(now, *r.Volume):
		g.ban(st, r, now)
		return VerdictVolume
	case r.CrossSite > 0 && g.crossSite(site, ip, now, r.CrossSite):
		return VerdictCrossSite
	case r.SessionCheck && session != "" && g.sessions[session] != "" && g.sessions[session] != ip:
		return VerdictSessionMismatch
	}
	return VerdictOK
}

func (g *guard) state(site, ip string) *ipState {
	k := siteIP{site, ip}
	st := g.ips[k]
	if st == nil {
		st = &ipState{}
		g.ips[k] = st
	}
	return st
}

func (g *guard) ban(st *ipState, r SiteRules, now time.Time) {
	st.bannedUntil = now.Add(r.BanFor)
	st.forever = st.forever || r.Strict
}

// crossSite bans ip here and on every other site it visited within window.
func (g *guard) crossSite(site, ip string, now time.Time, window time.Duration) bool {
	flagged := false
	for other, at := range g.seen[ip] {
		if other == site || now.Sub(at) >= window {
			continue
		}
		g.ban(g.state(other, ip), g.rules[other], now)
		flagged = true
	}
	if flagged {
		g.ban(g.state(site, ip), g.rules[site], now)
	}
	return flagged
}

func (g *guard) see(ip, site string, now time.Time) {
	if g.seen[ip] == nil {
		g.seen[ip] = map[string]time.Time{}
	}
	g.seen[ip][site] = now
}

// issue creates a session value for site bound to ip.
func (g *guard) issue(site, ip string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := fmt.Sprintf("%s.%016x", site[:2], g.rng.Uint64())
	g.sessions[v] = ip
	return v
}

// known reports whether session was issued by the testbed.
func (g *guard) known(session string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[session] != ""
}

// retryAfter is how long ip stays banned on site (0 when not, a day when
// the ban is for the run).
func (g *guard) retryAfter(site, ip string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.ips[siteIP{site, ip}]
	switch {
	case st == nil:
		return 0
	case st.forever:
		return 24 * time.Hour
	case !st.banned(now):
		return max(st.limitedUntil.Sub(now), 0)
	}
	return max(st.bannedUntil.Sub(now), 0)
}

// Banned reports whether ip is banned on site at now.
func (g *guard) isBanned(site, ip string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.ips[siteIP{site, ip}]
	return st != nil && st.banned(now)
}
