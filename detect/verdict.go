package detect

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind is what a response means for the job and for the proxy that fetched
// it. The zero value is not a valid kind.
type Kind uint8

// Verdict kinds.
const (
	// OK: the page is the page asked for; parse it.
	OK Kind = iota + 1
	// Blocked: a ban, captcha or placeholder page; ban the proxy for the site.
	Blocked
	// RateLimited: the site asks to slow down; cool the proxy down for
	// Verdict.RetryAfter (0 means the caller's default).
	RateLimited
	// ProxyFailure: the request failed in transport (proxy fault, timeout);
	// count a failure against the proxy, not a ban.
	ProxyFailure
	// NotFound: the page is gone (404, 410); no retry, no penalty.
	NotFound
	// ServerError: the site failed (5xx) or answered an unexpected status;
	// no proxy penalty.
	ServerError
	// Suspect: an answer that is ambiguous by itself (an empty list where
	// items are expected, a size drop against the baseline, an expected
	// selector missing from an otherwise well-formed page): a soft ban or
	// a true "no results". Ask once more from a second proxy (see
	// Decide); until then the proxy is neither punished nor cleared.
	Suspect
	// Challenge: a JavaScript challenge (a clearance cookie must be minted
	// by script in a browser) stands in front of the page: neither a ban
	// nor an answer. The browser tier clears it through the same proxy,
	// and the page is asked again; the proxy is never punished for it (I7).
	Challenge
	// RequestDefect: the site refused the request as crawlq sent it, not
	// the IP (Wildberries' 403 to an API call without the headers its
	// page sends): no proxy is punished, and asking again, from any
	// proxy, gets the same answer. The job fails at once, naming the
	// endpoint; the request must be fixed.
	RequestDefect
)

var kindNames = map[Kind]string{
	OK: "ok", Blocked: "blocked", RateLimited: "rate_limited",
	ProxyFailure: "proxy_failure", NotFound: "not_found", ServerError: "server_error",
	Suspect: "suspect", Challenge: "challenge", RequestDefect: "request_defect",
}

// String returns the kind's snake_case name, e.g. "rate_limited".
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText encodes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) {
	if _, ok := kindNames[k]; !ok {
		return nil, fmt.Errorf("invalid verdict kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText decodes a kind name.
func (k *Kind) UnmarshalText(b []byte) error {
	for kind, name := range kindNames {
		if name == string(b) {
			*k = kind
			return nil
		}
	}
	return fmt.Errorf("unknown verdict kind %q", b)
}

// Verdict is the judgement of one response.
type Verdict struct {
	Kind Kind `json:"kind"`
	// Reason is a short class of the verdict: "block page", "captcha
	// redirect", "placeholder", "timeout", ...
	Reason string `json:"reason,omitempty"`
	// Rule is the evidence, which rule fired: "status 403",
	// `marker "Доступ ограничен"`, "url /captcha",
	// "missing selector div[data-marker=item]", "size 812 < min 20000",
	// "size drop 0.08 of baseline".
	Rule string `json:"rule,omitempty"`
	// Status is the response's HTTP status (0 on a transport error).
	Status int `json:"status,omitempty"`
	// RetryAfter is the site's Retry-After for RateLimited, 0 if none.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// Shape describes a Suspect answer for comparison with a second
	// opinion: the empty list's path and the answer's total, or the
	// missing selectors, or the size band. Empty for other kinds.
	Shape string `json:"shape,omitempty"`
	// IfConfirmed is what a Suspect answer is when a second proxy's
	// answer agrees: OK (no results) or NotFound (the item is gone).
	IfConfirmed Kind `json:"if_confirmed,omitempty"`
	// IfUnsolved is what a Challenge answer is when the browser's one
	// visit through the same IP ends on the same page (or there is no
	// browser to try): Blocked for a challenge-first page
	// (Rule.ChallengeFirstMarkers); 0 for a challenge that is never a ban.
	IfUnsolved Kind `json:"if_unsolved,omitempty"`
}

// verdictJSON is Verdict on the wire, with RetryAfter as a duration string.
type verdictJSON struct {
	Kind        Kind   `json:"kind"`
	Reason      string `json:"reason,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Status      int    `json:"status,omitempty"`
	RetryAfter  string `json:"retry_after,omitempty"`
	Shape       string `json:"shape,omitempty"`
	IfConfirmed *Kind  `json:"if_confirmed,omitempty"`
	IfUnsolved  *Kind  `json:"if_unsolved,omitempty"`
}

// MarshalJSON writes RetryAfter as a Go duration string ("30s").
func (v Verdict) MarshalJSON() ([]byte, error) {
	w := verdictJSON{Kind: v.Kind, Reason: v.Reason, Rule: v.Rule, Status: v.Status, Shape: v.Shape}
	if v.IfConfirmed != 0 {
		w.IfConfirmed = &v.IfConfirmed
	}
	if v.IfUnsolved != 0 {
		w.IfUnsolved = &v.IfUnsolved
	}
	if v.RetryAfter > 0 {
		w.RetryAfter = v.RetryAfter.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var w verdictJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*v = Verdict{Kind: w.Kind, Reason: w.Reason, Rule: w.Rule, Status: w.Status, Shape: w.Shape}
	if w.IfConfirmed != nil {
		v.IfConfirmed = *w.IfConfirmed
	}
	if w.IfUnsolved != nil {
		v.IfUnsolved = *w.IfUnsolved
	}
	if w.RetryAfter == "" {
		return nil
	}
	d, err := time.ParseDuration(w.RetryAfter)
	if err != nil {
		return fmt.Errorf("retry_after: %w", err)
	}
	v.RetryAfter = d
	return nil
}

// String is a one-line summary: "blocked: block page (marker \"captcha\")".
func (v Verdict) String() string {
	s := v.Kind.String()
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	if v.Rule != "" {
		s += " (" + v.Rule + ")"
	}
	return s
}
