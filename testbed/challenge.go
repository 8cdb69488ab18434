package testbed

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Challenge request-log verdicts and meanings.
const (
	// VerdictChallenge: the request carried no valid clearance cookie and
	// got the site's JavaScript challenge (Wildberries' APIs: 498).
	VerdictChallenge Verdict = "challenge"
	// VerdictCookieMisused: the request carried a clearance cookie minted
	// for another IP or User-Agent; it was refused with the challenge.
	VerdictCookieMisused Verdict = "cookie_misused"
)

// Entry.Challenge values.
const (
	// ChallengeServed: the answer was the challenge (or WB's 498).
	ChallengeServed = "served"
	// ChallengeSolved: the first request accepted with a newly minted
	// clearance cookie: the script ran and its proof of work was right.
	ChallengeSolved = "solved"
	// ChallengeMisused: a clearance cookie of another (IP, User-Agent).
	ChallengeMisused = "misused"
)

// AbtResultPath is where Ozon's challenge script posts its proof of work;
// the answer sets the clearance cookie (Ozon's /abt/result).
const AbtResultPath = "/abt/result"

// ChallengeRule puts a JavaScript challenge in front of a site: a request
// without a valid clearance cookie gets a page whose script does a small
// proof of work over a nonce in the page, sets the cookie and reloads.
// Ozon's page, like the real one, only loads its script from the CDN
// host (CDNHost), which posts the work to AbtResultPath for the cookie;
// the other sites' scripts are inline and set the cookie themselves. The cookie is bound to the (IP, User-Agent) the nonce was
// issued to and expires after TTL.
type ChallengeRule struct {
	// TTL is the clearance cookie's lifetime. Default 10 minutes.
	TTL time.Duration `json:"ttl"`
	// Bits is the proof of work's difficulty: the leading zero bits the
	// script's hash must have. Default 14 (some 16,000 hashes).
	Bits int `json:"bits"`
	// WallStatus is the status of Wildberries' anti-bot wall (its home
	// page challenge and its APIs' refusal): 498 as captured in 2026
	// (default), or 200, the variant reported served too.
	WallStatus int `json:"wall_status,omitempty"`
	// PoWCompl is the difficulty of Avito's proof of work: the hex zeros
	// its sha256 must start with. Default DefaultPoWCompl, at most 6.
	PoWCompl int `json:"pow_compl,omitempty"`
}

// Default challenge settings.
const (
	DefaultChallengeTTL  = 10 * time.Minute
	DefaultChallengeBits = 14
)

func (c ChallengeRule) withDefaults() ChallengeRule {
	if c.TTL <= 0 {
		c.TTL = DefaultChallengeTTL
	}
	if c.Bits <= 0 || c.Bits > 24 {
		c.Bits = DefaultChallengeBits
	}
	if c.PoWCompl <= 0 || c.PoWCompl > maxPoWCompl {
		c.PoWCompl = DefaultPoWCompl
	}
	return c
}

// ChallengeCookie is the clearance cookie's name on each site: Ozon's
// antibot cookie, Wildberries' token and the one Avito's proof of work
// sets.
var ChallengeCookie = map[string]string{
	SiteOzon: "abt_data", SiteWildberries: "x_wbaas_token", SiteAvito: AvitoClearanceCookie,
}

// nonceGrant is what a challenge's nonce was issued to.
type nonceGrant struct {
	ip, ua  string
	expires time.Time
	used    bool // a request was accepted with it: the solve is counted
}

// challenges is one site's challenge state. Safe for concurrent use.
type challenges struct {
	rule   ChallengeRule
	cookie string
	mu     sync.Mutex
	grants map[string]*nonceGrant // nonce (Avito: the clearance) -> grant
	pow    *avitoPoW              // Avito's proof of work; nil elsewhere
}

func newChallenges(site string, rule *ChallengeRule) *challenges {
	if rule == nil {
		return nil
	}
	c := &challenges{rule: rule.withDefaults(), cookie: ChallengeCookie[site], grants: map[string]*nonceGrant{}}
	if site == SiteAvito {
		c.pow = newAvitoPoW(c.rule.PoWCompl)
	}
	return c
}

// issue makes a nonce for (ip, ua), valid until its cookie would expire.
func (c *challenges) issue(ip, ua string, now time.Time) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	c.grants[nonce] = &nonceGrant{ip: ip, ua: ua, expires: now.Add(c.rule.TTL)}
	return nonce
}

// clearance judges the request's cookie: "" when it carries none or one
// that is not valid (forged, wrong work, expired), ChallengeMisused for a
// valid cookie of another IP or User-Agent, ChallengeSolved for the first
// use of a valid one and "ok" for a later use.
func (c *challenges) clearance(r *http.Request, ip string, now time.Time) string {
	ck, err := r.Cookie(c.cookie)
	if err != nil {
		return ""
	}
	nonce, ok := c.minted(ck.Value)
	if !ok {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.grants[nonce]
	switch {
	case g == nil || !now.Before(g.expires):
		return ""
	case g.ip != ip || g.ua != r.UserAgent():
		return ChallengeMisused
	case !g.used:
		g.used = true
		return ChallengeSolved
	}
	return "ok"
}

// minted is the nonce a clearance cookie's value was minted for, if its
// work is right: the script's "nonce.n", or Avito's clearance itself
// (its work was checked when it was set).
func (c *challenges) minted(value string) (string, bool) {
	if c.pow != nil {
		return value, true
	}
	nonce, work, ok := strings.Cut(value, ".")
	n, err := strconv.ParseUint(work, 10, 64)
	return nonce, ok && err == nil && proofOK(nonce, n, c.rule.Bits)
}

// proofOK checks the script's proof of work: fnv1a(nonce ":" n) has bits
// leading zero bits.
func proofOK(nonce string, n uint64, bits int) bool {
	return fnv1a(nonce+":"+strconv.FormatUint(n, 10))>>(32-bits) == 0
}

// fnv1a is 32-bit FNV-1a over the bytes of s; the page's script computes
// the same over its (ASCII) string.
func fnv1a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 0x01000193
	}
	return h
}

// challenged applies the challenge rule to a request the guard let
// through; done says the answer was written (a challenge, a 498 or a
// refused cookie). It records the outcome in e.
func (s *Site) challenged(w http.ResponseWriter, r *http.Request, e *Entry) (Verdict, bool) {
	c := s.challenge
	if c == nil || !s.challengeApplies(r) {
		return "", false
	}
	if s.name == SiteOzon && r.URL.Path == AbtResultPath {
		return s.abtResult(w, r, e), true
	}
	if c.pow != nil && isAvitoPoWPath(r.URL.Path) {
		return s.avitoPoWExchange(w, r, e), true
	}
	switch got := c.clearance(r, e.IP, e.Start); got {
	case ChallengeSolved:
		e.Challenge = ChallengeSolved
		return s.afterClearance(w, r)
	case "ok":
		return s.afterClearance(w, r)
	case ChallengeMisused:
		e.Challenge = ChallengeMisused
		s.serveChallenge(w, r, e)
		return VerdictCookieMisused, true
	}
	e.Challenge = ChallengeServed
	s.serveChallenge(w, r, e)
	return VerdictChallenge, true
}

// abtResult checks the proof of work the challenge script posted
// ("nonce.n") and sets the clearance cookie for it: 204, or 403 for work
// that is wrong or for a nonce issued to another IP or User-Agent.
func (s *Site) abtResult(w http.ResponseWriter, r *http.Request, e *Entry) Verdict {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 256))
	value := strings.TrimSpace(string(raw))
	nonce, work, _ := strings.Cut(value, ".")
	n, perr := strconv.ParseUint(work, 10, 64)
	c := s.challenge
	if err != nil || perr != nil || !proofOK(nonce, n, c.rule.Bits) || !c.issuedTo(nonce, e.IP, r.UserAgent(), e.Start) {
		w.WriteHeader(http.StatusForbidden)
		return VerdictChallenge
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookie, Value: value, Path: "/", MaxAge: int(c.rule.TTL / time.Second)})
	w.WriteHeader(http.StatusNoContent)
	return VerdictOK
}

// issuedTo says whether nonce was issued to (ip, ua) and is still valid.
func (c *challenges) issuedTo(nonce, ip, ua string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.grants[nonce]
	return g != nil && now.Before(g.expires) && g.ip == ip && g.ua == ua
}

// afterClearance serves Wildberries' home page once cleared; other
// requests go on to the routes.
func (s *Site) afterClearance(w http.ResponseWriter, r *http.Request) (Verdict, bool) {
	if s.name == SiteWildberries && r.URL.Path == "/" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, wbHomeHTML)
		return VerdictOK, true
	}
	return "", false
}

// challengeApplies says which requests need the cookie: every page of
// Ozon and Avito; on Wildberries the __internal APIs (498 without it) and
// the home page, where the challenge mints it. Wildberries' older
// search.wb.ru paths are served without it.
func (s *Site) challengeApplies(r *http.Request) bool {
	if s.name != SiteWildberries {
		return true
	}
	return r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/__internal/")
}

// serveChallenge writes the challenge: Wildberries' APIs answer 498 with
// an empty body (the page's script would fetch the token from the home
// page); every other request gets the site's challenge page.
func (s *Site) serveChallenge(w http.ResponseWriter, r *http.Request, e *Entry) {
	if s.name == SiteWildberries && r.URL.Path != "/" {
		wbRefuse(w, s.challenge.rule.wallStatus())
		return
	}
	if s.challenge.pow != nil {
		s.serveAvitoPoW(w, r, e)
		return
	}
	c := s.challenge
	nonce := c.issue(e.IP, r.UserAgent(), e.Start)
	page := challengePage{Nonce: nonce, Bits: c.rule.Bits, Cookie: c.cookie, TTL: int(c.rule.TTL / time.Second), CDN: s.cdnURL(r),
		Incident: "fab_chlg_" + e.Start.UTC().Format("20060102150405") + "_" + strings.ToUpper(nonce[:16])}
	status := http.StatusOK
	switch s.name {
	case SiteOzon:
		status = http.StatusForbidden // as parsers report Ozon's challenge
	case SiteWildberries:
		status = c.rule.wallStatus()
	}
	render(w, status, challengeTmpl[s.name], page)
}

// challengePage fills a challenge template.
type challengePage struct {
	Nonce, Cookie, Incident string
	// CDN is the base URL of the CDN host, in the page's scheme.
	CDN       string
	Bits, TTL int
}

// challengeScript finds n with fnv1a(nonce+":"+n) >>> (32-bits) == 0,
// sets the cookie "nonce.n" and reloads.
const challengeScript = `<script>(function(){var n={{.Nonce}},b={{.Bits}},i=0;
function h(s){var x=0x811c9dc5;for(var k=0;k<s.length;k++){x^=s.charCodeAt(k);x=Math.imul(x,0x01000193)>>>0}return x}
while((h(n+":"+i)>>>(32-b))!==0)i++;
document.cookie={{.Cookie}}+"="+n+"."+i+"; path=/; max-age={{.TTL}}";location.reload()})();</script>`

// challengeTmpl are the script challenges' pages: Ozon's is the real
// antibot challenge page's frame (internal/samples), Wildberries' the
// home page's check. Avito's proof of work has its own (avitoPoWTmpl).
var challengeTmpl = map[string]*template.Template{
	SiteOzon: template.Must(template.New("ozon-challenge").Parse(`<html lang="ru"><head><meta charset="UTF-8">
<title>Доступ ограничен</title>
<link rel="stylesheet" href="{{.CDN}}` + ChallengeStylePath + `"></head>
<body><noscript><div class="container"><div class="message"><div class="variant">
<h2 class="title">Пожалуйста, включите JavaScript для продолжения</h2>
<span class="subtitle">Нам нужно убедиться, что вы не робот.</span></div></div>
<div class="details"><span class="details-text"><b>ID:</b> {{.Incident}}</span></div></div></noscript>
<div class="container"><div class="content"><div class="mc"><div class="c"><div class="h"><h1>Доступ ограничен</h1></div>
<p class="s">Инцидент: {{.Incident}}</p></div></div></div></div>
<script src="{{.CDN}}` + ChallengeScriptPath + `" data-nonce="{{.Nonce}}" data-bits="{{.Bits}}"></script>
</body></html>
`)),
	SiteWildberries: template.Must(template.New("wb-challenge").Parse(`<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8">
<title>Почти готово...</title>
<link rel="stylesheet" href="/__wbaas/challenges/antibot/__static/v2/index.css"></head>
<body><div class="w"><div id="wait_msg"></div><div id="c_cont"></div></div><b id="s-key" data-site-key="7400bd5df8b843b28254659f10915f31"></b>
` + challengeScript + `
</body></html>
`)),
}

// cdnURL is the CDN's base URL in the scheme r came by (its https
// listener for a request to the site's https one).
func (s *Site) cdnURL(r *http.Request) string {
	if s.cdn == nil {
		return ""
	}
	return s.cdn.URL(fingerprintOf(r.Context()) != nil)
}

// wbHomeHTML is the cleared home page: what the browser waits for.
const wbHomeHTML = `<!DOCTYPE html><html lang="ru"><head><meta charset="utf-8"><title>Wildberries — интернет-магазин</title></head>` +
	`<body><div id="app" class="main-page"><header class="header"></header></div></body></html>`

// ChallengeCounts is what the request log tells of challenges.
type ChallengeCounts struct {
	// Served counts challenge answers (pages and WB's 498s).
	Served int `json:"served"`
	// Solved counts clearance cookies accepted for the first time.
	Solved int `json:"solved"`
	// Misused counts requests refused for another IP's or UA's cookie.
	Misused int `json:"misused"`
}

// Challenges counts the log's challenge entries.
func (l *Log) Challenges() ChallengeCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c ChallengeCounts
	for _, e := range l.entries {
		switch e.Challenge {
		case ChallengeServed:
			c.Served++
		case ChallengeSolved:
			c.Solved++
		case ChallengeMisused:
			c.Misused++
		}
	}
	return c
}
