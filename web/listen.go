package web

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"go.uber.org/zap"
)

// ErrNoAuth is returned by Serve and Run for a listener beyond loopback
// when the server has neither Auth nor InsecureNoAuth: the queues would be
// open to anyone who reaches the port.
var ErrNoAuth = errors.New("listening beyond loopback without auth")

// ErrTLSPair is returned for a TLS certificate without its key or a key
// without its certificate.
var ErrTLSPair = errors.New("a TLS certificate and its key go together")

// ErrTLSLoad is returned for a TLS certificate and key whose files do not
// load as a pair.
var ErrTLSLoad = errors.New("TLS certificate and key do not load")

// loadTLS reads the certificate and key files of cfg; nil without them.
func loadTLS(cfg Config) (*tls.Config, error) {
	if cfg.TLSCert == "" && cfg.TLSKey == "" {
		return nil, nil
	}
	if cfg.TLSCert == "" || cfg.TLSKey == "" {
		return nil, fmt.Errorf("web: %w (cert %q, key %q)", ErrTLSPair, cfg.TLSCert, cfg.TLSKey)
	}
	pair, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("web: %w (cert %s, key %s): %w", ErrTLSLoad, cfg.TLSCert, cfg.TLSKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// admit decides whether the server may serve on a, the listener of the
// address the user wrote as name ("0.0.0.0:8080", which a names [::]:8080):
// on loopback always; beyond it only with Auth or InsecureNoAuth. It warns
// when beyond loopback whoever reaches the port sees the queues
// (InsecureNoAuth) or the password crosses the network in clear text
// (Auth over plain HTTP). Its refusal and warnings name name.
func (s *Server) admit(a net.Addr, name string) error {
	if isLoopback(a) {
		return nil
	}
	switch {
	case s.cfg.Auth == "" && !s.cfg.InsecureNoAuth:
		return fmt.Errorf("web: %s: %w, whoever reaches the port could manage the queues", name, ErrNoAuth)
	case s.cfg.Auth == "":
		s.log.Warn("web: listening beyond loopback without auth (--insecure-no-auth): whoever reaches this port sees the pool and can manage the queues",
			zap.String("listen", name))
	case s.tls == nil:
		s.log.Warn("web: basic auth over plain HTTP beyond loopback: the password crosses the network in clear text; serve HTTPS with --tls-cert and --tls-key, or put a TLS proxy in front",
			zap.String("listen", name))
	}
	return nil
}

// isLoopback reports whether a listener address is on 127.0.0.0/8 or ::1.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address such as "127.0.0.1:8080"
// or "localhost:0" stays on loopback; ":8080" and "0.0.0.0:8080" listen on
// every interface and do not. The error is that of an address that does
// not resolve.
func IsLoopbackAddr(addr string) (bool, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return false, err
	}
	return ta.IP.IsLoopback(), nil
}

// scheme is the URL scheme the server answers on.
func (s *Server) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}
