package fetcher

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/proxy"
)

// stageError is a failure while reaching or handshaking with the proxy,
// classified where it happened.
type stageError struct {
	kind ErrorKind
	err  error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func stageFail(kind ErrorKind, err error) error { return &stageError{kind: kind, err: err} }

// proxyDialer is the DialContext of one proxy's transport. Without a proxy
// it dials the target directly.
type proxyDialer struct {
	proxy     *url.URL // nil: direct
	addr      string   // the proxy's host:port
	net       *net.Dialer
	handshake time.Duration
	tls       *tls.Config
}

func newProxyDialer(p *url.URL, cfg Config) *proxyDialer {
	d := &proxyDialer{
		proxy:     p,
		net:       &net.Dialer{Timeout: cfg.DialTimeout},
		handshake: cfg.ProxyHandshakeTimeout,
		tls:       cfg.TLS,
	}
	if p != nil {
		d.addr = proxyAddr(p)
	}
	return d
}

// proxyAddr is p's host:port with the scheme's default port.
func proxyAddr(p *url.URL) string {
	if p.Port() != "" {
		return p.Host
	}
	port := map[string]string{"http": "80", "https": "443"}[p.Scheme]
	if port == "" {
		port = "1080"
	}
	return net.JoinHostPort(p.Hostname(), port)
}

func isSOCKS(scheme string) bool { return scheme == "socks5" || scheme == "socks5h" }

// DialContext connects to addr: directly without a proxy, to the proxy
// itself when net/http forwards a plain http request through it, else
// through a tunnel (CONNECT or socks5).
func (d *proxyDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch {
	case d.proxy == nil:
		return d.net.DialContext(ctx, network, addr)
	case isSOCKS(d.proxy.Scheme):
		return d.socks(ctx, addr)
	case addr == d.addr:
		return d.dialProxy(ctx)
	}
	return d.tunnel(ctx, addr)
}

// dialProxy opens a TCP connection to the proxy.
func (d *proxyDialer) dialProxy(ctx context.Context) (net.Conn, error) {
	c, err := d.net.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, stageFail(proxyKind(err), err)
	}
	return c, nil
}

// tunnel opens a CONNECT tunnel to addr through an http(s) proxy.
func (d *proxyDialer) tunnel(ctx context.Context, addr string) (net.Conn, error) {
	c, err := d.dialProxy(ctx)
	if err != nil {
		return nil, err
	}
	tc, err := d.openTunnel(ctx, c, addr)
	if err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// openTunnel runs TLS to an https proxy, then CONNECT, within the
// handshake timeout.
func (d *proxyDialer) openTunnel(ctx context.Context, c net.Conn, addr string) (net.Conn, error) {
	defer d.bound(ctx, c)()
	if d.proxy.Scheme == "https" {
		tc := tls.Client(c, d.proxyTLS())
		if err := tc.Handshake(); err != nil {
			return nil, stageFail(proxyKind(err), fmt.Errorf("tls to proxy: %w", err))
		}
		c = tc
	}
	return connect(c, addr, d.proxy.User)
}

// bound puts the handshake deadline on c and cuts it short when ctx ends;
// the returned func lifts both.
func (d *proxyDialer) bound(ctx context.Context, c net.Conn) func() {
	c.SetDeadline(time.Now().Add(d.handshake))
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		c.SetDeadline(time.Time{})
	}
}

func (d *proxyDialer) proxyTLS() *tls.Config {
	cfg := &tls.Config{}
	if d.tls != nil {
		cfg = d.tls.Clone()
	}
	cfg.ServerName = d.proxy.Hostname()
	return cfg
}

// connect asks the proxy on c for a tunnel to addr and checks its answer.
func connect(c net.Conn, addr string, user *url.Userinfo) (net.Conn, error) {
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: addr},
		Host:   addr,
		Header: http.Header{"User-Agent": {""}}, // send none
	}
	if user != nil {
		req.Header.Set("Proxy-Authorization", basicAuth(user))
	}
	if err := req.Write(c); err != nil {
		return nil, stageFail(proxyKind(err), fmt.Errorf("send connect: %w", err))
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, stageFail(proxyKind(err), fmt.Errorf("read connect answer: %w", err))
	}
	if err := connectStatus(resp); err != nil {
		return nil, err
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// connectStatus turns a non-200 CONNECT answer into a proxy fault.
func connectStatus(resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusProxyAuthRequired:
		return stageFail(ProxyAuth, fmt.Errorf("connect answered %s", resp.Status))
	}
	return stageFail(ProxyRefused, fmt.Errorf("connect answered %s", resp.Status))
}

func basicAuth(u *url.Userinfo) string {
	pass, _ := u.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass))
}

// bufferedConn reads what the CONNECT answer's reader already buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// socksHandshaker runs the socks5 handshake on a connection already open
// to the proxy; x/net/proxy's SOCKS5 dialer implements it.
type socksHandshaker interface {
	DialWithConn(ctx context.Context, c net.Conn, network, address string) (net.Addr, error)
}

// socks opens a socks5 tunnel to addr, with username/password auth when
// the proxy URL has a user: connect within DialTimeout, then handshake
// within ProxyHandshakeTimeout.
func (d *proxyDialer) socks(ctx context.Context, addr string) (net.Conn, error) {
	sd, err := proxy.SOCKS5("tcp", d.addr, socksAuth(d.proxy.User), proxy.Direct)
	if err != nil {
		return nil, fmt.Errorf("socks5 dialer: %w", err)
	}
	hs, ok := sd.(socksHandshaker)
	if !ok {
		return nil, fmt.Errorf("socks5 dialer %T cannot handshake on a connection", sd)
	}
	c, err := d.dialProxy(ctx)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, d.handshake)
	defer cancel()
	if _, err := hs.DialWithConn(hctx, c, "tcp", addr); err != nil {
		c.Close()
		return nil, stageFail(socksKind(err), err)
	}
	return c, nil
}

// socksKind classifies a socks5 handshake failure; x/net/proxy reports
// rejected credentials only in the message.
func socksKind(err error) ErrorKind {
	if isTimeout(err) {
		return ProxyTimeout
	}
	if strings.Contains(err.Error(), "authentication") {
		return ProxyAuth
	}
	return ProxyRefused
}

func socksAuth(u *url.Userinfo) *proxy.Auth {
	if u == nil {
		return nil
	}
	pass, _ := u.Password()
	return &proxy.Auth{User: u.Username(), Password: pass}
}
