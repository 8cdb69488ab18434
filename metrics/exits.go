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
	registerFour(reg, f, [4][2]string{
		{"crawlq_worker_exit_probes_total", "Exit IPs learned through a proxy (gateway sessions, proxies that probe their exit)."},
		{"crawlq_worker_exit_rerolls_total", "New gateway session ids taken because the exit IP was held by another session or quarantined for the site."},
		{"crawlq_worker_exit_waits_total", "Waits for an exit IP another session held."},
		{"crawlq_worker_exit_changes_total", "Exits found moved within a session (the provider's idle time or TTL passed): the old IP's cookies dropped."},
	})
}

// ModemFigures is what /metrics reads of a worker's modem rotations
// (sessions.Manager.ModemCounts).
type ModemFigures func() (rotations, failed, refused, ended int64)

// RegisterModems registers with reg the worker's modem counters, read
// from f at each scrape: one series each, whatever the number of modems.
func RegisterModems(reg prometheus.Registerer, f ModemFigures) {
	registerFour(reg, f, [4][2]string{
		{"crawlq_worker_modem_rotations_total", "Modem IP rotations this worker ran to a new IP (on a ban, or the site's rotate_after)."},
		{"crawlq_worker_modem_rotation_failures_total", "Modem rotations that got no new IP: the modem was quarantined instead."},
		{"crawlq_worker_modem_change_refusals_total", "Change-IP calls the provider refused (429): waited out per its Retry-After."},
		{"crawlq_worker_modem_sessions_ended_total", "Sessions ended before a request because their modem was changing its IP."},
	})
}

// registerFour registers four counters, each {name, help}, the i-th
// reading the i-th of read's numbers at each scrape.
func registerFour[F ~func() (int64, int64, int64, int64)](reg prometheus.Registerer, read F, counters [4][2]string) {
	for i, c := range counters {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c[0], Help: c[1]}, func() float64 {
			a, b, d, e := read()
			return float64([4]int64{a, b, d, e}[i])
		}))
	}
}
