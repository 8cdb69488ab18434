// Package demo runs crawlq end to end in one process with zero setup: an
// embedded Redis, the testbed's three simulated sites with their anti-bot
// rules on, a loopback proxy farm with dead and flaky proxies imported into
// the broker, three workers with their own server IDs, and the web
// dashboard. It enqueues a mix of jobs for every site, shows live progress,
// and ends with a Summary whose invariant counts come from the testbed's
// own request log. `crawlq demo` is a thin wrapper around Run.
package demo
