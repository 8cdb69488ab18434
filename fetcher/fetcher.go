package fetcher

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Fetcher sends requests through proxies, keeping a transport per proxy.
// It is safe for concurrent use.
type Fetcher struct {
	cfg        Config
	log        *zap.Logger
	transports *transportCache
}

// New builds a Fetcher; zero Config fields take their defaults.
func New(cfg Config) *Fetcher {
	cfg = cfg.withDefaults()
	build := func(p *url.URL, fp string) roundTripper { return newProxyTransport(p, fp, cfg) }
	return &Fetcher{
		cfg:        cfg,
		log:        cfg.Logger,
		transports: newTransportCache(cfg.MaxTransports, build),
	}
}

// Do sends req through req.Proxy, follows redirects and reads the decoded
// body up to the cap. Every error is an *Error. A body past the cap
// returns both the cut Response (Truncated set) and an *Error of kind
// BodyTooLarge; other errors return no Response. A 407 from the proxy is a
// ProxyAuth error, never a Response.
func (f *Fetcher) Do(ctx context.Context, req Request) (*Response, error) {
	fp := f.fingerprint(req)
	if err := checkFingerprint(fp, req.URL); err != nil {
		return nil, f.fail(req, Other, err)
	}
	t, err := f.transports.get(req.Proxy, fp)
	if err != nil {
		return nil, f.fail(req, Other, err)
	}
	tctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	var ph phaseTracker
	hreq, err := newHTTPRequest(httptrace.WithClientTrace(tctx, ph.trace()), req)
	if err != nil {
		return nil, f.fail(req, Other, err)
	}
	start := time.Now()
	hresp, err := f.client(t, req.Jar).Do(hreq)
	if err != nil {
		return nil, f.fail(req, classify(ctx, err, ph.get(), req.Proxy != nil), err)
	}
	defer hresp.Body.Close()
	return f.finish(ctx, req, hresp, start)
}

// finish reads the body of hresp and builds the Response.
func (f *Fetcher) finish(ctx context.Context, req Request, hresp *http.Response, start time.Time) (*Response, error) {
	if hresp.StatusCode == http.StatusProxyAuthRequired && req.Proxy != nil {
		return nil, f.fail(req, ProxyAuth, fmt.Errorf("proxy answered %s", hresp.Status))
	}
	b, err := readBody(hresp, f.cfg.BodyCap)
	if err != nil {
		return nil, f.fail(req, classify(ctx, err, phaseConnected, req.Proxy != nil), err)
	}
	resp := newResponse(hresp, b, start, printable(req.Proxy))
	if resp.Truncated {
		return resp, f.fail(req, BodyTooLarge, fmt.Errorf("decoded body passed the %d byte cap", f.cfg.BodyCap))
	}
	f.log.Debug("fetched", zap.String("url", req.URL), zap.String("final_url", resp.FinalURL),
		zap.String("proxy", resp.Proxy), zap.Int("status", resp.Status),
		zap.Int64("bytes", resp.BytesRead), zap.Duration("latency", resp.Latency))
	return resp, nil
}

// fingerprint names the TLS fingerprint req goes out with.
func (f *Fetcher) fingerprint(req Request) string {
	if f.cfg.PlainTLS {
		return TLSGo
	}
	return req.profile().Fingerprint()
}

// checkFingerprint refuses an https request whose fingerprint this build
// lacks: it would go out as Go's TLS under a browser's User-Agent.
func checkFingerprint(fp, rawURL string) error {
	if fp == TLSGo || !strings.HasPrefix(strings.ToLower(rawURL), "https:") {
		return nil
	}
	if _, ok := FingerprintByName(fp); !ok {
		return fmt.Errorf("%w %q", ErrUnknownFingerprint, fp)
	}
	return nil
}

// client is a per-request client over t with the session's jar.
func (f *Fetcher) client(t http.RoundTripper, jar http.CookieJar) *http.Client {
	return &http.Client{Transport: t, Jar: jar, CheckRedirect: f.checkRedirect}
}

// checkRedirect stops after MaxRedirects redirects.
func (f *Fetcher) checkRedirect(_ *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return &redirectsError{max: f.cfg.MaxRedirects}
	}
	return nil
}

// fail wraps err as an *Error of kind and logs it, the proxy masked.
func (f *Fetcher) fail(req Request, kind ErrorKind, err error) *Error {
	e := &Error{Kind: kind, Proxy: printable(req.Proxy), Err: err}
	f.log.Debug("fetch failed", zap.String("url", req.URL), zap.String("proxy", e.Proxy),
		zap.Stringer("kind", kind), zap.Error(err))
	return e
}

// CloseIdle closes the idle connections of every proxy's transport.
func (f *Fetcher) CloseIdle() { f.transports.closeIdle() }

// Forget drops the cached transports of proxy p and closes their idle
// connections: a gateway session's URL (its session id in the username)
// that will not be used again would otherwise hold them until evicted.
func (f *Fetcher) Forget(p *url.URL) { f.transports.forget(p) }

// Close closes idle connections and drops the transports; Do fails with
// ErrClosed afterwards. Requests in flight finish.
func (f *Fetcher) Close() { f.transports.close() }
