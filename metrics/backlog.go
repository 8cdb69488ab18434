package metrics

import "github.com/prometheus/client_golang/prometheus"

// BacklogGate is what /metrics reads of a worker's results backlog gate
// (*tasks.BacklogGate).
type BacklogGate interface {
	// Backlog is the results entries the durable sink has not
	// acknowledged, as the worker last read it.
	Backlog() int64
	// Reason is why the worker takes no new job ("" while it takes them).
	Reason() string
}

// RegisterBacklogGauges registers crawlq_results_backlog and
// crawlq_worker_paused, read from the worker's backlog gate.
func RegisterBacklogGauges(reg prometheus.Registerer, g BacklogGate) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_results_backlog",
		Help: "Results entries the durable sink has not acknowledged, as this worker last read it."},
		func() float64 { return float64(g.Backlog()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawlq_worker_paused",
			Help: "1 while the worker takes no new job because the results backlog is over --results-backlog."},
			func() float64 {
				if g.Reason() != "" {
					return 1
				}
				return 0
			}))
}
