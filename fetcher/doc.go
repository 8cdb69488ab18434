// Package fetcher sends one HTTP request through a leased proxy: http and
// https proxies (absolute-form for http targets, a CONNECT tunnel for https
// targets) and socks5 proxies, each with optional user:password. It keeps a
// transport per proxy so connections are reused across a session's requests,
// applies dial, handshake, header and overall timeouts, follows redirects
// with the session's cookie jar, sends a consistent browser header Profile,
// decodes gzip, deflate and brotli bodies and caps the decoded body so a
// huge or hostile response is cut, never read whole.
//
// A Profile also names the browser's TLS and HTTP/2 Fingerprint: https
// requests go out with that browser's ClientHello (uTLS), HTTP/2 SETTINGS,
// window update, pseudo-header and header order (fhttp), from
// bogdanfinn/tls-client's building blocks (impersonate.go), so a request
// claiming Chrome 156 has Chrome 156's JA4. Transports are kept per
// (proxy, fingerprint). Config.PlainTLS sends Go's own TLS instead.
//
// Every failure is an *Error whose Kind says whose fault it was (the proxy,
// the target, TLS, the body size or the caller), so detect and sessions can
// act on it. Proxy passwords never appear in errors or logs.
package fetcher
