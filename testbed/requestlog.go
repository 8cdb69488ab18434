package testbed

import (
	"slices"
	"sync"
	"time"
)

// Verdict is what a site decided about one request.
type Verdict string

// Verdicts in the request log.
const (
	VerdictOK       Verdict = "ok"        // served normally
	VerdictNotFound Verdict = "not_found" // served, 404
	// VerdictTooFast: faster than MinInterval; punished, and a ban starts.
	VerdictTooFast Verdict = "too_fast"
	// VerdictBanned: punished because the IP is banned.
	VerdictBanned Verdict = "banned"
	// VerdictSessionMismatch: the session cookie belongs to another IP.
	VerdictSessionMismatch Verdict = "session_mismatch"
	// VerdictCrossSite: the IP was on another site within the window; a
	// ban starts on both.
	VerdictCrossSite Verdict = "cross_site"
	// VerdictExempt: a testbed endpoint (whoami, captcha) outside the rules.
	VerdictExempt Verdict = "exempt"
)

// Blocked reports whether v refused the request.
func (v Verdict) Blocked() bool {
	return v == VerdictTooFast || v == VerdictBanned || v == VerdictSessionMismatch || v == VerdictCrossSite ||
		v == VerdictSoftBanned || v == VerdictVolume || v == VerdictRateLimited || v == VerdictHiddenBan
}

// StartsBan reports whether v began a ban.
func (v Verdict) StartsBan() bool {
	return v == VerdictTooFast || v == VerdictCrossSite || v == VerdictVolume || v == VerdictHiddenBan
}

// Entry is one request as a site saw it.
type Entry struct {
	Seq    int    `json:"seq"`
	Site   string `json:"site"`
	IP     string `json:"ip"`
	Method string `json:"method"`
	// Host is the host name the request named (no port): the site's
	// loopback address, or a name such as a basket host's.
	Host string `json:"host,omitempty"`
	// Path is the request path with its query.
	Path  string    `json:"path"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Session is the session cookie the request carried, or the one issued
	// to it when it carried none.
	Session string  `json:"session"`
	Issued  bool    `json:"issued,omitempty"`
	Verdict Verdict `json:"verdict"`
	Status  int     `json:"status"`
	// Meant is what a listing (or Wildberries card list) answer meant:
	// items, empty (nothing matches) or banned (a soft ban hid the
	// items); "" for other requests and refused ones.
	Meant Meaning `json:"meant,omitempty"`
	// Challenge is what the site's JavaScript challenge made of the
	// request: ChallengeServed, ChallengeSolved (the first request a new
	// clearance cookie cleared), ChallengeMisused, or "".
	Challenge string `json:"challenge,omitempty"`
	// JA4 and H2 are the client's TLS and HTTP/2 fingerprints (HTTPS only;
	// H2 empty on HTTP/1.1).
	JA4 string `json:"ja4,omitempty"`
	H2  string `json:"h2,omitempty"`
	// Conn numbers the site's TLS connection that carried the request.
	Conn uint64 `json:"conn,omitempty"`
	// HeaderOrder lists the header names of the first HTTP/2 request on
	// that connection, in the order sent.
	HeaderOrder string `json:"header_order,omitempty"`
	// Refused says why the header check refused the request (VerdictHeaders).
	Refused string `json:"refused,omitempty"`
}

// Log records every request of every site. Safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

// add appends e, numbering it.
func (l *Log) add(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = len(l.entries) + 1
	l.entries = append(l.entries, e)
}

// Entries returns a copy of the log in arrival order of completion.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// Len is the number of logged requests.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Reset forgets every entry (for a fresh measurement in one run).
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}
