package fetcher

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	fhttp "github.com/bogdanfinn/fhttp"
	"github.com/bogdanfinn/fhttp/http2"
	fhttptrace "github.com/bogdanfinn/fhttp/httptrace"
	utls "github.com/bogdanfinn/utls"
)

// impersonator sends https requests as the browser of one Fingerprint:
// uTLS writes its ClientHello, fhttp's HTTP/2 its SETTINGS, window update,
// pseudo-header and header order; a server that picks http/1.1 in ALPN
// gets fhttp's HTTP/1.1 with the same header order. Connections come from
// the proxy's dialer, so every proxy kind works. It is one proxy's
// transport for one fingerprint: connections are reused per (proxy,
// fingerprint).
type impersonator struct {
	fp        *Fingerprint
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	tls       *utls.Config
	handshake time.Duration
	redial    time.Duration // bounds a dial of the HTTP/2 transport, which has no ctx
	header    time.Duration
	h1        *fhttp.Transport
	h2        *http2.Transport

	mu     sync.Mutex
	protos map[string]string   // target addr → protocol the server chose
	stash  map[string]net.Conn // a connection dialed to learn it, for the next dial
}

func newImpersonator(fp *Fingerprint, d *proxyDialer, cfg Config) *impersonator {
	im := &impersonator{fp: fp, dial: d.DialContext, tls: utlsConfig(cfg.TLS),
		handshake: cfg.TLSHandshakeTimeout, header: cfg.ResponseHeaderTimeout,
		redial: cfg.DialTimeout + cfg.ProxyHandshakeTimeout + cfg.TLSHandshakeTimeout,
		protos: map[string]string{}, stash: map[string]net.Conn{}}
	im.h1 = &fhttp.Transport{
		DialTLSContext:      im.dialTLS,
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: cfg.MaxIdleConnsPerProxy,
		IdleConnTimeout:     cfg.IdleConnTimeout,
		DisableCompression:  true, // Do decodes, under the cap
		TLSNextProto:        map[string]func(string, *utls.Conn) fhttp.RoundTripper{},
	}
	c := fp.Client
	im.h2 = &http2.Transport{
		DialTLS:            func(network, addr string, _ *utls.Config) (net.Conn, error) { return im.dialTLSNoCtx(network, addr) },
		Settings:           c.GetSettings(),
		SettingsOrder:      c.GetSettingsOrder(),
		ConnectionFlow:     c.GetConnectionFlow(),
		HeaderPriority:     c.GetHeaderPriority(),
		Priorities:         c.GetPriorities(),
		PseudoHeaderOrder:  c.GetPseudoHeaderOrder(),
		IdleConnTimeout:    cfg.IdleConnTimeout,
		DisableCompression: true,
	}
	return im
}

// utlsConfig carries the roots (and the test-only skip) of c over to uTLS.
func utlsConfig(c *tls.Config) *utls.Config {
	out := &utls.Config{OmitEmptyPsk: true}
	if c != nil {
		out.RootCAs = c.RootCAs
		out.InsecureSkipVerify = c.InsecureSkipVerify
	}
	return out
}

// RoundTrip sends req as the fingerprint's browser.
func (im *impersonator) RoundTrip(req *http.Request) (*http.Response, error) {
	addr := targetAddr(req.URL)
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GetConn != nil {
		trace.GetConn(addr)
	}
	ctx, cancel := context.WithCancel(req.Context())
	clock := &headerClock{d: im.header, cancel: cancel}
	proto, err := im.protocol(ctx, addr)
	if err != nil {
		clock.stop(false)
		return nil, err
	}
	fr, err := im.send(proto, im.request(ctx, req, clock))
	if clock.stop(err == nil) {
		if fr != nil {
			fr.Body.Close()
		}
		return nil, stageFail(TargetTimeout, fmt.Errorf("no response headers within %s", im.header))
	}
	if err != nil {
		return nil, err
	}
	return response(fr, req, clock), nil
}

func (im *impersonator) send(proto string, fr *fhttp.Request) (*fhttp.Response, error) {
	if proto == http2.NextProtoTLS {
		return im.h2.RoundTrip(fr)
	}
	return im.h1.RoundTrip(fr)
}

// headerClock is the response header timeout of one request: it starts
// when the request has its connection and cancels the request's context
// when the headers take longer.
type headerClock struct {
	d       time.Duration
	cancel  context.CancelFunc
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// start starts the clock once; a stopped clock stays stopped.
func (c *headerClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer == nil && !c.stopped {
		c.timer = time.AfterFunc(c.d, c.cancel)
	}
}

// stop stops the clock, keeping the context alive for the body when keep
// is set (else releasing it), and reports whether the clock had run out.
func (c *headerClock) stop(keep bool) bool {
	c.mu.Lock()
	c.stopped = true
	t := c.timer
	c.mu.Unlock()
	fired := t != nil && !t.Stop()
	if fired || !keep {
		c.cancel()
	}
	return fired
}

// protocol is the ALPN protocol addr's server chose, learned on the first
// connection (kept for the transport's next dial).
func (im *impersonator) protocol(ctx context.Context, addr string) (string, error) {
	im.mu.Lock()
	p, ok := im.protos[addr]
	im.mu.Unlock()
	if ok {
		return p, nil
	}
	c, err := im.handshakeTo(ctx, addr)
	if err != nil {
		return "", err
	}
	p = c.ConnectionState().NegotiatedProtocol
	im.mu.Lock()
	defer im.mu.Unlock()
	im.protos[addr] = p
	if old := im.stash[addr]; old != nil {
		old.Close()
	}
	im.stash[addr] = c
	return p, nil
}

// dialTLS returns the stashed connection to addr or a new one.
func (im *impersonator) dialTLS(ctx context.Context, _, addr string) (net.Conn, error) {
	im.mu.Lock()
	c := im.stash[addr]
	delete(im.stash, addr)
	im.mu.Unlock()
	if c != nil {
		return c, nil
	}
	return im.handshakeTo(ctx, addr)
}

func (im *impersonator) dialTLSNoCtx(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), im.redial)
	defer cancel()
	return im.dialTLS(ctx, network, addr)
}

// handshakeTo connects to addr through the proxy and runs the
// fingerprint's TLS handshake within the handshake timeout.
func (im *impersonator) handshakeTo(ctx context.Context, addr string) (*utls.UConn, error) {
	raw, err := im.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cfg := im.tls.Clone()
	cfg.ServerName = hostOf(addr)
	uc := utls.UClient(raw, cfg, im.fp.Client.GetClientHelloId(), im.fp.ShuffleExtensions, false, true)
	if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	hctx, cancel := context.WithTimeout(ctx, im.handshake)
	defer cancel()
	if err := uc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, stageFail(handshakeKind(ctx, err), fmt.Errorf("tls handshake with %s: %w", addr, err))
	}
	return uc, nil
}

// handshakeKind blames a slow handshake on the target, anything else on
// TLS; a canceled caller stays canceled.
func handshakeKind(ctx context.Context, err error) ErrorKind {
	switch {
	case ctx.Err() != nil && !isTimeout(ctx.Err()):
		return Canceled
	case isTimeout(err):
		return TargetTimeout
	}
	return TLS
}

// request is req as fhttp's request under ctx, with the fingerprint's
// header order, the header clock and the caller's trace hooks.
func (im *impersonator) request(ctx context.Context, req *http.Request, clock *headerClock) *fhttp.Request {
	h := make(fhttp.Header, len(req.Header)+1)
	names := make([]string, 0, len(req.Header))
	for k, v := range req.Header {
		h[k] = v
		names = append(names, strings.ToLower(k))
	}
	sort.Strings(names)
	h[fhttp.HeaderOrderKey] = im.fp.headerOrder(headerOrderOf(req.Context()), names)
	fr := &fhttp.Request{Method: req.Method, URL: req.URL, Header: h, Body: req.Body, GetBody: req.GetBody,
		ContentLength: req.ContentLength, Host: req.Host, Close: req.Close,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	return fr.WithContext(traced(ctx, clock))
}

// traced starts the header clock when fhttp has the request's connection
// and passes its connection events on to the net/http trace in ctx, which
// tells Do how far a failed request got.
func traced(ctx context.Context, clock *headerClock) context.Context {
	t := httptrace.ContextClientTrace(ctx)
	if t == nil {
		t = &httptrace.ClientTrace{}
	}
	return fhttptrace.WithClientTrace(ctx, &fhttptrace.ClientTrace{
		GetConn: t.GetConn,
		GotConn: func(i fhttptrace.GotConnInfo) {
			clock.start()
			if t.GotConn != nil {
				t.GotConn(httptrace.GotConnInfo{Conn: i.Conn, Reused: i.Reused, WasIdle: i.WasIdle, IdleTime: i.IdleTime})
			}
		},
	})
}

// response is fr as a net/http response to req; closing its body releases
// the request's context.
func response(fr *fhttp.Response, req *http.Request, clock *headerClock) *http.Response {
	return &http.Response{
		Status: fr.Status, StatusCode: fr.StatusCode,
		Proto: fr.Proto, ProtoMajor: fr.ProtoMajor, ProtoMinor: fr.ProtoMinor,
		Header: http.Header(fr.Header), Trailer: http.Header(fr.Trailer),
		Body:          &releasingBody{ReadCloser: fr.Body, release: func() { clock.stop(false) }},
		ContentLength: fr.ContentLength, TransferEncoding: fr.TransferEncoding,
		Close: fr.Close, Uncompressed: fr.Uncompressed, Request: req,
	}
}

// releasingBody runs release once when closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// CloseIdleConnections closes both transports' idle connections and any
// stashed one.
func (im *impersonator) CloseIdleConnections() {
	im.h1.CloseIdleConnections()
	im.h2.CloseIdleConnections()
	im.mu.Lock()
	defer im.mu.Unlock()
	for addr, c := range im.stash {
		c.Close()
		delete(im.stash, addr)
	}
}

// targetAddr is u's host:port, 443 by default.
func targetAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "443")
}

// hostOf is addr's host without the port.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
