// Package testbed is crawlq's simulated world: a proxy farm on loopback
// addresses (each proxy listens on, and dials out from, its own 127.0.0.x
// address, so sites see one client IP per proxy), simulated Wildberries, Ozon
// and Avito sites with a deterministic catalog and configurable anti-bot
// rules, a request log, and a checker for the invariants I1 and I2
// (docs/architecture.md#invariants). The demo, the tests and the
// benchmarks all run on it.
//
// Every site also serves HTTPS with a certificate of a CA generated per run;
// with Config.Fingerprint it computes each client's JA4 (ja4.go) and HTTP/2
// fingerprint (h2fingerprint.go) and refuses one that is not the browser its
// User-Agent claims (fingerprint.go). HelloCapture reads the ClientHello of
// any client, a real browser included, through a CONNECT proxy.
//
// Beside the farm it can run a gateway (gateway.go: one port, an exit per
// session id) and mobile modems (modem.go: a port per modem, one exit at a
// time, changed through a change-IP link, modemchange.go). A site's rules
// can ban by rate, by volume (volume.go), across sites, softly or with a
// challenge.
//
// Everything listens on 127.0.0.0/8 only, and the farm refuses to dial
// anything that is not a loopback address.
package testbed
