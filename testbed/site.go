package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// CaptchaPath is where CaptchaRedirect sends banned clients.
const CaptchaPath = "/captcha"

// pages is what differs between the simulated sites.
type pages interface {
	// routes serves the site's own URLs from the catalog.
	routes() http.Handler
	// blockPage writes the site's "access restricted" page with status.
	blockPage(w http.ResponseWriter, status int)
	// placeholder writes a shrunken 200 answer without products.
	placeholder(w http.ResponseWriter, r *http.Request)
	// cookie is the name of the site's session cookie.
	cookie() string
}

// Site is one running simulated site.
type Site struct {
	name   string
	rules  SiteRules
	pages  pages
	routes http.Handler
	guard  *guard
	soft   *softBans
	// challenge is nil unless the site runs in challenge mode.
	challenge *challenges
	// incidents is nil unless the site serves the incident page.
	incidents *incidents
	cdn       *CDN // serves the challenge's external script
	log       *Log
	now       func() time.Time
	zl        *zap.Logger
	srv       *http.Server
	ln        net.Listener
	done      chan struct{}
	https     *httpsFront // nil: plain http only
	// headerCheck refuses requests whose headers are not the claimed
	// browser's (headers.go).
	headerCheck bool
}

// siteDeps is what every site shares.
type siteDeps struct {
	cdn   *CDN
	guard *guard
	log   *Log
	now   func() time.Time
	zl    *zap.Logger
	// headers turns the header check on.
	headers bool
}

func newPages(name string, c catalogAt, rules SiteRules) (pages, error) {
	switch name {
	case SiteWildberries:
		return &wildberries{c: c, upstreams: rules.Upstreams, shells: newShells(rules.ProductShell)}, nil
	case SiteOzon:
		return &ozon{c: c}, nil
	case SiteAvito:
		return &avito{c: c}, nil
	}
	return nil, fmt.Errorf("site %q: %w", name, ErrNotFound)
}

// startSite listens on 127.0.0.1 (a free port) and serves name.
func startSite(name string, rules SiteRules, c *Catalog, d siteDeps) (*Site, error) {
	p, err := newPages(name, catalogAt{c: c, now: d.now}, rules)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("site %s listen: %w", name, err)
	}
	s := &Site{name: name, rules: rules, pages: p, routes: p.routes(), guard: d.guard, soft: newSoftBans(rules.SoftBan),
		challenge: newChallenges(name, rules.Challenge), incidents: newIncidents(rules.Incident), cdn: d.cdn, log: d.log, now: d.now, headerCheck: d.headers,
		zl: d.zl.With(zap.String("site", name)), ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.serve()
	return s, nil
}

func (s *Site) serve() {
	defer close(s.done)
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.zl.Warn("site stopped", zap.Error(err))
	}
}

// URL is the site's base URL (http://127.0.0.1:PORT).
func (s *Site) URL() string { return "http://" + s.ln.Addr().String() }

// Name is the site's name.
func (s *Site) Name() string { return s.name }

// Rules are the site's anti-bot rules.
func (s *Site) Rules() SiteRules { return s.rules }

// close stops the server and waits for it.
func (s *Site) close(ctx context.Context) {
	if s.https != nil {
		s.https.close(ctx)
	}
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}

// ServeHTTP applies the anti-bot rules, serves or punishes, and logs.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := Entry{Site: s.name, IP: clientIP(r), Method: r.Method, Path: r.URL.RequestURI(), Start: s.now()}
	e.Host = hostOnly(r.Host)
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	e.Verdict = s.handle(rec, r, &e)
	e.Status, e.End = rec.status, s.now()
	s.log.add(e)
	rec.send()
	if e.Verdict.StartsBan() {
		s.zl.Info("ip banned", zap.String("ip", e.IP), zap.String("verdict", string(e.Verdict)))
	}
}

func (s *Site) handle(w *statusWriter, r *http.Request, e *Entry) Verdict {
	switch r.URL.Path {
	case WhoamiPath:
		serveWhoami(w, r)
		return VerdictExempt
	case CaptchaPath:
		s.pages.blockPage(w, http.StatusOK)
		return VerdictExempt
	}
	if s.checkFingerprint(w, r, e) {
		return VerdictFingerprint
	}
	if s.checkHeaders(w, r, e) {
		return VerdictHeaders
	}
	e.Session, e.Issued = s.session(w, r, e.IP)
	presented := e.Session
	if e.Issued {
		presented = ""
	}
	if v := s.guard.judge(s.name, e.IP, presented, e.Start); v.Blocked() {
		s.refuse(w, r, e.IP, v)
		return v
	}
	if v, done := s.incident(w, e); done {
		return v
	}
	if v, done := s.challenged(w, r, e); done {
		return v
	}
	if v, done := s.emptyOrSoftBan(w, r, e); done {
		return v
	}
	s.routes.ServeHTTP(w, r)
	if w.status == http.StatusNotFound {
		return VerdictNotFound
	}
	return VerdictOK
}

// session returns the request's session cookie, issuing one (Set-Cookie)
// when it carries none the testbed knows.
func (s *Site) session(w http.ResponseWriter, r *http.Request, ip string) (string, bool) {
	if c, err := r.Cookie(s.pages.cookie()); err == nil && s.guard.known(c.Value) {
		return c.Value, false
	}
	v := s.guard.issue(s.name, ip)
	http.SetCookie(w, &http.Cookie{Name: s.pages.cookie(), Value: v, Path: "/", HttpOnly: true})
	return v, true
}

// refuse answers a request the rules refused: a hidden gap's rate limit
// with 429 and its Retry-After, anything else as the rules punish.
func (s *Site) refuse(w http.ResponseWriter, r *http.Request, ip string, v Verdict) {
	if v == VerdictRateLimited {
		s.tooMany(w, ip)
		return
	}
	s.punish(w, r, ip)
}

// punish answers a refused request the way the site's rules say.
func (s *Site) punish(w http.ResponseWriter, r *http.Request, ip string) {
	switch s.rules.Punishment {
	case Forbidden403:
		s.pages.blockPage(w, http.StatusForbidden)
	case CaptchaPage200:
		s.pages.blockPage(w, http.StatusOK)
	case CaptchaRedirect:
		http.Redirect(w, r, CaptchaPath+"?back="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
	case Placeholder:
		s.pages.placeholder(w, r)
	case BlockPage429:
		s.pages.blockPage(w, http.StatusTooManyRequests)
	case BlockPage206:
		s.pages.blockPage(w, http.StatusPartialContent)
	case Status439:
		s.pages.blockPage(w, 439)
	default:
		s.tooMany(w, ip)
	}
}

func (s *Site) tooMany(w http.ResponseWriter, ip string) {
	secs := math.Ceil(s.guard.retryAfter(s.name, ip, s.now()).Seconds())
	w.Header().Set("Retry-After", strconv.Itoa(max(int(secs), 1)))
	http.Error(w, "too many requests", http.StatusTooManyRequests)
}

// statusWriter holds the answer until its entry is in the request log, so
// whoever has read an answer finds its entry there (the site's truth is
// never behind what a client saw).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}

// send writes the held answer to the client.
func (w *statusWriter) send() {
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.body.WriteTo(w.ResponseWriter)
}
