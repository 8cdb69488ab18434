package metrics

import "github.com/prometheus/client_golang/prometheus"

// ExitFigures is what /metrics reads of a worker's gateway sessions
// (sessions.Manager.ExitCounts, as four numbers so this package needs no
// sessions import).
type ExitFigures func() (probes, rerolls, waits, changes int64)

// RegisterExits registers with reg the worker's exit-IP counters, read
// from f at each scrape: one series each, whatever the number of
// gateways and sessions.
func RegisterExits(reg prometheus.Registerer, f ExitFigures) {
	counter := func(name, help string, pick func(p, r, w, c int64) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			return float64(pick(f()))
		})
	}
	reg.MustRegister(
		counter("crawlq_worker_exit_probes_total", "Exit IPs learned through a proxy (gateway sessions, proxies that probe their exit).",
			func(p, _, _, _ int64) int64 { return p }),
		counter("crawlq_worker_exit_rerolls_total", "New gateway session ids taken because the exit IP was held by another session or quarantined for the site.",
			func(_, r, _, _ int64) int64 { return r }),
		counter("crawlq_worker_exit_waits_total", "Waits for an exit IP another session held.",
			func(_, _, w, _ int64) int64 { return w }),
		counter("crawlq_worker_exit_changes_total", "Exits found moved within a session (the provider's idle time or TTL passed): the old IP's cookies dropped.",
			func(_, _, _, c int64) int64 { return c }))
}

// ModemFigures is what /metrics reads of a worker's modem rotations
// (sessions.Manager.ModemCounts).
type ModemFigures func() (rotations, failed, refused, ended int64)

// RegisterModems registers with reg the worker's modem counters, read
// from f at each scrape: one series each, whatever the number of modems.
func RegisterModems(reg prometheus.Registerer, f ModemFigures) {
	counter := func(name, help string, pick func(r, f, x, e int64) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			return float64(pick(f()))
		})
	}
	reg.MustRegister(
		counter("crawlq_worker_modem_rotations_total", "Modem IP rotations this worker ran to a new IP (on a ban, or the site's rotate_after).",
			func(r, _, _, _ int64) int64 { return r }),
		counter("crawlq_worker_modem_rotation_failures_total", "Modem rotations that got no new IP: the modem was quarantined instead.",
			func(_, f, _, _ int64) int64 { return f }),
		counter("crawlq_worker_modem_change_refusals_total", "Change-IP calls the provider refused (429): waited out per its Retry-After.",
			func(_, _, x, _ int64) int64 { return x }),
		counter("crawlq_worker_modem_sessions_ended_total", "Sessions ended before a request because their modem was changing its IP.",
			func(_, _, _, e int64) int64 { return e }))
}
