package fetcher

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// roundTripper is a cached transport.
type roundTripper interface {
	http.RoundTripper
	CloseIdleConnections()
}

// transportCache keeps one transport per (proxy, TLS fingerprint), keyed
// by the whole proxy URL (credentials included: gateway proxies differ
// only by user) and the fingerprint's name, so a session's requests reuse
// its connections and never share one with another browser. It is safe
// for concurrent use.
type transportCache struct {
	mu     sync.Mutex
	byKey  map[string]*cachedTransport
	tick   uint64
	max    int
	closed bool
	build  func(p *url.URL, fingerprint string) roundTripper
}

type cachedTransport struct {
	t    roundTripper
	used uint64 // tick of the last get, for LRU eviction
}

func newTransportCache(max int, build func(*url.URL, string) roundTripper) *transportCache {
	return &transportCache{byKey: map[string]*cachedTransport{}, max: max, build: build}
}

// get returns the transport of proxy p and fingerprint fp, building it on
// first use; nil proxy is the direct transport.
func (c *transportCache) get(p *url.URL, fp string) (roundTripper, error) {
	if err := checkProxy(p); err != nil {
		return nil, err
	}
	key := fp + " "
	if p != nil {
		key += p.String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	c.tick++
	if e, ok := c.byKey[key]; ok {
		e.used = c.tick
		return e.t, nil
	}
	if len(c.byKey) >= c.max {
		c.evictLocked()
	}
	e := &cachedTransport{t: c.build(p, fp), used: c.tick}
	c.byKey[key] = e
	return e.t, nil
}

// evictLocked drops the least recently used transport; its requests in
// flight finish, its idle connections close.
func (c *transportCache) evictLocked() {
	oldest, key := ^uint64(0), ""
	for k, e := range c.byKey {
		if e.used < oldest {
			oldest, key = e.used, k
		}
	}
	if e, ok := c.byKey[key]; ok {
		e.t.CloseIdleConnections()
		delete(c.byKey, key)
	}
}

// forget drops the transports of proxy p, every fingerprint's, closing
// their idle connections.
func (c *transportCache) forget(p *url.URL) {
	suffix := " " + p.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.byKey {
		if strings.HasSuffix(k, suffix) {
			e.t.CloseIdleConnections()
			delete(c.byKey, k)
		}
	}
}

// len is the number of cached transports.
func (c *transportCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

// closeIdle closes every transport's idle connections.
func (c *transportCache) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.byKey {
		e.t.CloseIdleConnections()
	}
}

// close closes idle connections and refuses further gets.
func (c *transportCache) close() {
	c.closeIdle()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	clear(c.byKey)
}

// checkProxy accepts http, https, socks5 and socks5h proxies with a host.
func checkProxy(p *url.URL) error {
	if p == nil {
		return nil
	}
	switch p.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return fmt.Errorf("%w %q", ErrUnsupportedProxy, p.Scheme)
	}
	if p.Hostname() == "" {
		return fmt.Errorf("proxy %s has no host", printable(p))
	}
	return nil
}

// proxyTransport is one proxy's transport for one fingerprint: https
// requests go out as the fingerprint's browser, plain http ones (and every
// request of the TLSGo fingerprint) through net/http.
type proxyTransport struct {
	plain *http.Transport
	imp   *impersonator // nil: Go's TLS
}

// RoundTrip sends r through the impersonator or net/http.
func (t *proxyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.imp != nil && r.URL.Scheme == "https" {
		return t.imp.RoundTrip(r)
	}
	return t.plain.RoundTrip(r)
}

// CloseIdleConnections closes both paths' idle connections.
func (t *proxyTransport) CloseIdleConnections() {
	t.plain.CloseIdleConnections()
	if t.imp != nil {
		t.imp.CloseIdleConnections()
	}
}

// newProxyTransport builds the transport of proxy p (nil: direct) for the
// fingerprint called fp.
func newProxyTransport(p *url.URL, fp string, cfg Config) *proxyTransport {
	d := newProxyDialer(p, cfg)
	t := &proxyTransport{plain: newTransport(p, d, cfg)}
	if f, ok := FingerprintByName(fp); ok && !cfg.PlainTLS {
		t.imp = newImpersonator(f, d, cfg)
	}
	return t
}

// newTransport builds the net/http transport for proxy p (nil: direct).
// Plain http targets go through an http(s) proxy in absolute form; https
// targets and every socks5 request go through the dialer's tunnel.
func newTransport(p *url.URL, d *proxyDialer, cfg Config) *http.Transport {
	t := &http.Transport{
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   cfg.TLSHandshakeTimeout,
		ResponseHeaderTimeout: cfg.ResponseHeaderTimeout,
		MaxIdleConnsPerHost:   cfg.MaxIdleConnsPerProxy,
		IdleConnTimeout:       cfg.IdleConnTimeout,
		DisableCompression:    true, // Do decodes, under the cap
	}
	if cfg.TLS != nil {
		t.TLSClientConfig = cfg.TLS.Clone()
	}
	if p != nil && !isSOCKS(p.Scheme) {
		t.Proxy = forwardPlainHTTP(p)
	}
	return t
}

// forwardPlainHTTP sends http:// requests to proxy p in absolute form and
// leaves https:// ones to the dialer's CONNECT tunnel.
func forwardPlainHTTP(p *url.URL) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		if r.URL.Scheme == "http" {
			return p, nil
		}
		return nil, nil
	}
}
