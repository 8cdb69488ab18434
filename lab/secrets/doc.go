// Package secrets holds only a test: it plants proxy and Redis passwords,
// runs a real crawl through a worker against the testbed on a
// password-protected Redis, and searches every log line, task payload and
// result, the results stream, every Redis value, the dashboard and the
// status snapshot for them. Only the broker's proxy spec hash may hold
// proxy credentials: it is what the workers dial with.
package secrets
