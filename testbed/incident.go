package testbed

import (
	"net/http"
	"sync"

	"crawlq/internal/samples"
)

// VerdictIncident: the request got Ozon's "Похоже, нет соединения"
// incident page (IncidentRule).
const VerdictIncident Verdict = "incident"

// IncidentRule makes a site answer some IPs with Ozon's real "Похоже, нет
// соединения" incident page of 2026-06 (samples.OzonIncidentPage: a
// fab_chlg_ incident id, a 96 KB inline obfuscated script and a noscript
// "включите JavaScript… не робот"), status 403, before anything else (the
// challenge included): the first IPs to ask the site, in the order they
// ask.
type IncidentRule struct {
	// IPs is how many IPs get the page.
	IPs int `json:"ips"`
	// Once gives each of them the page for its first request only: the
	// incident passes, and a browser's visit through the IP meets the
	// site (its challenge, in challenge mode). Otherwise every request
	// from the IP gets the page: a block no visit passes.
	Once bool `json:"once,omitempty"`
}

// incidents is one site's incident state. Safe for concurrent use.
type incidents struct {
	rule IncidentRule
	mu   sync.Mutex
	// ips maps each IP chosen to whether it has had the page.
	ips map[string]bool
}

func newIncidents(rule *IncidentRule) *incidents {
	if rule == nil || rule.IPs <= 0 {
		return nil
	}
	return &incidents{rule: *rule, ips: map[string]bool{}}
}

// meets says whether a request from ip gets the incident page.
func (in *incidents) meets(ip string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	had, chosen := in.ips[ip]
	if !chosen && len(in.ips) < in.rule.IPs {
		chosen = true
	}
	if !chosen || had && in.rule.Once {
		return false
	}
	in.ips[ip] = true
	return true
}

// incident answers a request from an IP the rule chose with the page.
func (s *Site) incident(w http.ResponseWriter, e *Entry) (Verdict, bool) {
	if s.incidents == nil || !s.incidents.meets(e.IP) {
		return "", false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(samples.OzonIncidentPage)
	return VerdictIncident, true
}
