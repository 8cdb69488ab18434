package fetcher

import (
	"errors"
	"fmt"
)

// ErrorKind says whose fault a failed Do was.
type ErrorKind int

// Error kinds. ProxyRefused, ProxyAuth and ProxyTimeout are proxy faults.
const (
	// Other is any failure not named below (bad URL, broken response,
	// too many redirects, unsupported encoding).
	Other ErrorKind = iota
	// ProxyRefused: the proxy could not be reached, dropped the connection
	// during its handshake, or refused to open the tunnel.
	ProxyRefused
	// ProxyAuth: the proxy rejected the credentials (HTTP 407, socks5 auth).
	ProxyAuth
	// ProxyTimeout: connecting to the proxy or its handshake timed out.
	ProxyTimeout
	// TargetTimeout: the target (or the tunnel to it) was too slow once the
	// connection stood: TLS handshake, response headers or body. A plain
	// http request forwarded by a slow proxy lands here too: its delay
	// cannot be told from a slow site's.
	TargetTimeout
	// TLS: the TLS handshake with the target failed (certificate, alert).
	TLS
	// BodyTooLarge: the decoded body passed the cap and was cut.
	BodyTooLarge
	// Canceled: the caller's context ended.
	Canceled
)

var kindNames = [...]string{
	Other:         "other",
	ProxyRefused:  "proxy_refused",
	ProxyAuth:     "proxy_auth",
	ProxyTimeout:  "proxy_timeout",
	TargetTimeout: "target_timeout",
	TLS:           "tls",
	BodyTooLarge:  "body_too_large",
	Canceled:      "canceled",
}

// String is the kind's snake_case name, for logs and metrics labels.
func (k ErrorKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// Sentinels, one per kind; errors.Is(err, ErrProxyAuth) matches an *Error
// of that kind. ErrTooManyRedirects, ErrUnsupportedProxy, ErrUnsupportedEncoding,
// ErrUnknownFingerprint and ErrClosed come wrapped in an *Error of kind Other.
var (
	ErrOther               = errors.New("fetch failed")
	ErrProxyRefused        = errors.New("proxy refused")
	ErrProxyAuth           = errors.New("proxy authentication failed")
	ErrProxyTimeout        = errors.New("proxy timed out")
	ErrTargetTimeout       = errors.New("target timed out")
	ErrTLS                 = errors.New("tls handshake failed")
	ErrBodyTooLarge        = errors.New("body too large")
	ErrCanceled            = errors.New("fetch canceled")
	ErrTooManyRedirects    = errors.New("too many redirects")
	ErrUnsupportedProxy    = errors.New("unsupported proxy scheme")
	ErrUnsupportedEncoding = errors.New("unsupported content-encoding")
	ErrClosed              = errors.New("fetcher closed")
	// ErrUnknownFingerprint: the profile names a TLS fingerprint this
	// build does not ship; the request is not sent rather than sent with
	// another browser's ClientHello.
	ErrUnknownFingerprint = errors.New("unknown tls fingerprint")
)

var kindSentinels = [...]error{
	Other:         ErrOther,
	ProxyRefused:  ErrProxyRefused,
	ProxyAuth:     ErrProxyAuth,
	ProxyTimeout:  ErrProxyTimeout,
	TargetTimeout: ErrTargetTimeout,
	TLS:           ErrTLS,
	BodyTooLarge:  ErrBodyTooLarge,
	Canceled:      ErrCanceled,
}

// redirectsError is a redirect Do stopped following: more than max in a
// row. It is ErrTooManyRedirects, and says so to detect, which does not
// import fetcher, with its TooManyRedirects method.
type redirectsError struct{ max int }

func (e *redirectsError) Error() string {
	return fmt.Sprintf("%v: more than %d", ErrTooManyRedirects, e.max)
}

func (e *redirectsError) Unwrap() error { return ErrTooManyRedirects }

// TooManyRedirects is true: the client stopped following redirects.
func (e *redirectsError) TooManyRedirects() bool { return true }

// Error is a classified failure of Do.
type Error struct {
	Kind ErrorKind
	// Proxy is the proxy URL with its password masked ("" without proxy).
	Proxy string
	// Err is the underlying error; it never holds a proxy password.
	Err error
}

// Error reads "fetch via http://user:***@host:port: proxy_auth: …".
func (e *Error) Error() string {
	via := ""
	if e.Proxy != "" {
		via = " via " + e.Proxy
	}
	return fmt.Sprintf("fetch%s: %s: %v", via, e.Kind, e.Err)
}

// Unwrap gives the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the kind's sentinel, so errors.Is(err, ErrProxyTimeout) works.
func (e *Error) Is(target error) bool {
	return e.Kind >= 0 && int(e.Kind) < len(kindSentinels) && kindSentinels[e.Kind] == target
}

// ProxyFault reports whether the proxy is to blame: ProxyRefused,
// ProxyAuth or ProxyTimeout.
func (e *Error) ProxyFault() bool {
	return e.Kind == ProxyRefused || e.Kind == ProxyAuth || e.Kind == ProxyTimeout
}

// Timeout reports whether the failure was a proxy or target timeout.
func (e *Error) Timeout() bool {
	return e.Kind == ProxyTimeout || e.Kind == TargetTimeout
}

// KindOf is the ErrorKind of err: its *Error's kind, Other for any other
// non-nil error, and -1 for nil.
func KindOf(err error) ErrorKind {
	if err == nil {
		return -1
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return Other
}
