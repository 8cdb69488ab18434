package testbed

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// VerdictFingerprint: the request's TLS or HTTP/2 fingerprint is not the
// one of the browser its User-Agent claims; answered like the real site
// answers a bot (403 with its block page), no ban.
const VerdictFingerprint Verdict = "fingerprint"

// BrowserFingerprint is what a real browser build sends: its JA4 (with
// SNI; a request to an IP address has one extension less) and its HTTP/2
// fingerprint in Akamai's form.
type BrowserFingerprint struct {
	JA4 string `json:"ja4"`
	H2  string `json:"h2"`
}

// knownBrowsers are real browsers as measured on Debian 12: chromium
// 156.0.8078.114 and firefox-esr 153.8.0esr (JA4 of the first ClientHello
// to a host, through a CONNECT proxy). Keyed by ClaimedBrowser.
var knownBrowsers = map[string]BrowserFingerprint{
	"chrome/156":  {JA4: "t13d1517h2_8daaf6152771_cb7bf5808d99", H2: "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p"},
	"firefox/153": {JA4: "t13d1617h2_86a278354501_3cbfd9057e0d", H2: "1:65536;2:0;4:131072;5:16384|12517377|0|m,p,a,s"},
}

// KnownBrowser returns the measured fingerprint of a ClaimedBrowser key.
func KnownBrowser(key string) (BrowserFingerprint, bool) {
	b, ok := knownBrowsers[key]
	return b, ok
}

var (
	firefoxUA = regexp.MustCompile(`Firefox/(\d+)`)
	chromeUA  = regexp.MustCompile(`Chrome/(\d+)`)
)

// ClaimedBrowser is the browser family and major version a User-Agent
// claims ("chrome/156", "firefox/153"), "" for anything else.
func ClaimedBrowser(ua string) string {
	if m := firefoxUA.FindStringSubmatch(ua); m != nil {
		return "firefox/" + m[1]
	}
	if m := chromeUA.FindStringSubmatch(ua); m != nil {
		return "chrome/" + m[1]
	}
	return ""
}

// FingerprintMismatch says why a request with User-Agent ua, JA4 ja4 and
// HTTP/2 fingerprint h2 ("" on HTTP/1.1) is not the browser it claims; ""
// when it is.
func FingerprintMismatch(ua, ja4, h2 string) string {
	key := ClaimedBrowser(ua)
	want, ok := knownBrowsers[key]
	switch {
	case !ok:
		return fmt.Sprintf("no known browser for user agent %q", ua)
	case !JA4SameBrowser(ja4, want.JA4):
		return fmt.Sprintf("ja4 %s is not %s's %s", ja4, key, want.JA4)
	case h2 == "":
		return fmt.Sprintf("%s would have spoken http/2", key)
	case h2 != want.H2:
		return fmt.Sprintf("http/2 %s is not %s's %s", h2, key, want.H2)
	}
	return ""
}

// connFingerprint is what one TLS connection told about its client.
type connFingerprint struct {
	id      uint64 // the site's TLS connection number, from 1
	mu      sync.Mutex
	ja4     string
	h2      string
	headers string        // header names of the first HTTP/2 request, in order
	done    chan struct{} // closed when the HTTP/2 fingerprint is read
	// take is the connection's header block of a request (fingerprintedConn.take).
	take func(method, path string) (H2Request, bool)
}

func newConnFingerprint(id uint64) *connFingerprint {
	return &connFingerprint{id: id, done: make(chan struct{})}
}

func (c *connFingerprint) setHello(h ClientHello) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ja4 = h.JA4()
}

// setH2 records how the connection began: fp on HTTP/2, nothing on
// HTTP/1.x, "unreadable" for a broken HTTP/2 preface.
func (c *connFingerprint) setH2(p *h2Parser) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case p.http1:
	case p.failed:
		c.h2 = "unreadable"
	default:
		c.h2, c.headers = p.fp.String(), strings.Join(p.fp.HeaderOrder, ",")
	}
	close(c.done)
}

func (c *connFingerprint) get() (ja4, h2, headers string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ja4, c.h2, c.headers
}

type fingerprintKey struct{}

func fingerprintOf(ctx context.Context) *connFingerprint {
	c, _ := ctx.Value(fingerprintKey{}).(*connFingerprint)
	return c
}

// h2RequestOf is the header block r came with, its fields in the order
// the client sent them; false on HTTP/1.x and plain http.
func h2RequestOf(r *http.Request) (H2Request, bool) {
	st := fingerprintOf(r.Context())
	if st == nil || r.ProtoMajor != 2 {
		return H2Request{}, false
	}
	return st.take(r.Method, r.RequestURI)
}

// httpsFront is a site's TLS listener: HTTP/2 and HTTP/1.1, each
// connection's JA4 and HTTP/2 fingerprint kept for the handler. The
// listener terminates TLS itself and hands net/http the plaintext
// (HTTP/1.1, or HTTP/2 with prior knowledge when ALPN chose h2), so the
// HTTP/2 preface can be read on its way in.
type httpsFront struct {
	ln    net.Listener
	srv   *http.Server
	check bool
	done  chan struct{}
}

// startHTTPS serves s over TLS with cert on a new 127.0.0.1 port; check
// turns the fingerprint rule on.
func (s *Site) startHTTPS(cert tls.Certificate, check bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("site %s https listen: %w", s.name, err)
	}
	f := &httpsFront{check: check, done: make(chan struct{})}
	base := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	f.ln = &helloListener{Listener: ln, base: base}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true) // the plaintext of an h2 TLS connection
	f.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnContext: connContext, Protocols: &protos}
	s.https = f
	go f.serve(s.zl)
	return nil
}

func (f *httpsFront) serve(zl *zap.Logger) {
	defer close(f.done)
	if err := f.srv.Serve(f.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		zl.Warn("https site stopped", zap.Error(err))
	}
}

// close stops the TLS server and waits for it.
func (f *httpsFront) close(ctx context.Context) {
	if err := f.srv.Shutdown(ctx); err != nil {
		f.srv.Close()
	}
	<-f.done
}

// connContext puts the connection's fingerprint into its context.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*fingerprintedConn); ok {
		return context.WithValue(ctx, fingerprintKey{}, fc.state)
	}
	return ctx
}

// helloListener hands out server TLS connections that record their
// client's ClientHello and HTTP/2 preface.
type helloListener struct {
	net.Listener
	base *tls.Config
	n    atomic.Uint64
}

func (l *helloListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	st := newConnFingerprint(l.n.Add(1))
	cfg := l.base.Clone()
	cfg.GetConfigForClient = func(info *tls.ClientHelloInfo) (*tls.Config, error) {
		st.setHello(HelloFromInfo(info))
		return nil, nil
	}
	// the handshake runs on the connection's first read, in its goroutine
	fc := &fingerprintedConn{Conn: tls.Server(c, cfg), state: st}
	st.take = fc.take
	return fc, nil
}

// checkFingerprint records the request's fingerprints on e and, with
// checks on, refuses a request that is not the browser it claims the way
// the real site refuses a bot: 403 with its block page. Plain http has no
// fingerprint and is never refused here.
func (s *Site) checkFingerprint(w http.ResponseWriter, r *http.Request, e *Entry) bool {
	st := fingerprintOf(r.Context())
	if st == nil {
		return false
	}
	select { // the first bytes were read (and parsed) before this handler ran
	case <-st.done:
	case <-r.Context().Done():
	}
	e.JA4, e.H2, e.HeaderOrder = st.get()
	e.Conn = st.id
	if !s.https.check {
		return false
	}
	why := FingerprintMismatch(r.UserAgent(), e.JA4, e.H2)
	if why == "" {
		return false
	}
	s.zl.Debug("fingerprint refused", zap.String("ip", e.IP), zap.String("why", why))
	s.pages.blockPage(w, http.StatusForbidden)
	return true
}

// FingerprintRefusals counts the requests refused for their fingerprint.
func (l *Log) FingerprintRefusals() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if e.Verdict == VerdictFingerprint {
			n++
		}
	}
	return n
}

// HTTPSURL is the site's https base URL ("" when it has no TLS listener).
func (s *Site) HTTPSURL() string {
	if s.https == nil {
		return ""
	}
	return "https://" + s.https.ln.Addr().String()
}
