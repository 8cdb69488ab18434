// Package testbed is crawlq's simulated world: a proxy farm on loopback
// addresses (each proxy listens on, and dials out from, its own 127.0.0.x
// address, so sites see one client IP per proxy), simulated Wildberries, Ozon
// and Avito sites with a deterministic catalog and configurable anti-bot
// rules, a request log, and a checker for the invariants I1 and I2 of
// ARCHITECTURE.md. The demo, the tests and the benchmarks all run on it.
//
// Everything listens on 127.0.0.0/8 only, and the farm refuses to dial
// anything that is not a loopback address.
package testbed
