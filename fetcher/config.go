package fetcher

import (
	"crypto/tls"
	"time"

	"go.uber.org/zap"
)

// Defaults of Config.
const (
	DefaultDialTimeout           = 5 * time.Second
	DefaultProxyHandshakeTimeout = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 5 * time.Second
	DefaultResponseHeaderTimeout = 15 * time.Second
	DefaultTimeout               = 30 * time.Second
	DefaultBodyCap               = 8 << 20
	DefaultMaxRedirects          = 10
	DefaultMaxIdleConnsPerProxy  = 4
	DefaultIdleConnTimeout       = 90 * time.Second
	DefaultMaxTransports         = 1024
)

// Config configures a Fetcher. Zero fields take the defaults named on them.
type Config struct {
	// DialTimeout bounds the TCP connect to the proxy (or to the target
	// when a request has no proxy). Default 5s.
	DialTimeout time.Duration
	// ProxyHandshakeTimeout bounds the proxy's handshake once connected:
	// TLS to an https proxy, CONNECT and its answer, socks5 negotiation and
	// auth. Default 10s.
	ProxyHandshakeTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake with the target.
	// Default 5s.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers after
	// the request is written. Default 15s.
	ResponseHeaderTimeout time.Duration
	// Timeout bounds a whole Do: connect, redirects and reading the body.
	// Default 30s.
	Timeout time.Duration
	// BodyCap is the most decoded body bytes kept; a larger body is cut.
	// Default 8 MiB.
	BodyCap int64
	// MaxRedirects is how many redirects Do follows. Default 10.
	MaxRedirects int
	// MaxIdleConnsPerProxy is how many idle connections each proxy's
	// transport keeps per target host. Default 4.
	MaxIdleConnsPerProxy int
	// IdleConnTimeout closes idle connections after this long. Default 90s.
	IdleConnTimeout time.Duration
	// MaxTransports caps the cached per-proxy transports; beyond it the
	// least recently used is dropped. Default 1024.
	MaxTransports int
	// TLS is the client TLS config for targets and https proxies (cloned).
	// Default: system roots. Its RootCAs and InsecureSkipVerify also apply
	// to the browser fingerprints' handshakes; set RootCAs to trust an
	// extra CA (RootCAsWith); InsecureSkipVerify is for tests only.
	TLS *tls.Config
	// PlainTLS sends every https request with Go's crypto/tls and
	// net/http whatever the profile's fingerprint: what crawlq did before
	// it impersonated browsers, kept for comparisons (bench crawl
	// --plain-tls). Sites that check fingerprints refuse it. Default off.
	PlainTLS bool
	// Logger receives debug logs, proxies masked. Default: no logs.
	Logger *zap.Logger
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	c.DialTimeout = orDuration(c.DialTimeout, DefaultDialTimeout)
	c.ProxyHandshakeTimeout = orDuration(c.ProxyHandshakeTimeout, DefaultProxyHandshakeTimeout)
	c.TLSHandshakeTimeout = orDuration(c.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	c.ResponseHeaderTimeout = orDuration(c.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	c.Timeout = orDuration(c.Timeout, DefaultTimeout)
	c.IdleConnTimeout = orDuration(c.IdleConnTimeout, DefaultIdleConnTimeout)
	if c.BodyCap <= 0 {
		c.BodyCap = DefaultBodyCap
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.MaxIdleConnsPerProxy <= 0 {
		c.MaxIdleConnsPerProxy = DefaultMaxIdleConnsPerProxy
	}
	if c.MaxTransports <= 0 {
		c.MaxTransports = DefaultMaxTransports
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
