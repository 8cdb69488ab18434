package fetcher

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
)

// classify names the kind of a failed request. parent is the caller's
// context, ph how far the request got, proxied whether it used a proxy.
func classify(parent context.Context, err error, ph phase, proxied bool) ErrorKind {
	var se *stageError
	switch {
	case parent.Err() != nil:
		return Canceled
	case errors.As(err, &se):
		return se.kind
	case isProxyConnect(err):
		return proxyKind(err)
	case isTLSError(err):
		return TLS
	case isTimeout(err):
		return timeoutKind(ph, proxied)
	case ph == phaseTLS:
		return TLS
	}
	return Other
}

// timeoutKind blames the proxy while the connection was still being set
// up through it, and the target after.
func timeoutKind(ph phase, proxied bool) ErrorKind {
	if proxied && ph == phaseConnecting {
		return ProxyTimeout
	}
	return TargetTimeout
}

// proxyKind classifies a failure to reach or handshake with the proxy.
func proxyKind(err error) ErrorKind {
	if isTimeout(err) {
		return ProxyTimeout
	}
	return ProxyRefused
}

// isProxyConnect matches net/http's wrapper for failures dialing a
// forwarding proxy (or its TLS).
func isProxyConnect(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "proxyconnect"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isTLSError(err error) bool {
	var (
		verr  *tls.CertificateVerificationError
		rerr  tls.RecordHeaderError
		aerr  tls.AlertError
		uaerr x509.UnknownAuthorityError
		herr  x509.HostnameError
		cerr  x509.CertificateInvalidError
	)
	return errors.As(err, &verr) || errors.As(err, &rerr) || errors.As(err, &aerr) ||
		errors.As(err, &uaerr) || errors.As(err, &herr) || errors.As(err, &cerr)
}
