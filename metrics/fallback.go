package metrics

import "github.com/prometheus/client_golang/prometheus"

// NewFallbackGauge registers crawlq_worker_broker_fallback (1 while the worker
// leases from its local fallback shard) and crawlq_worker_broker_fallbacks_total
// with reg, and returns the FallbackConfig.OnFallback that sets them.
func NewFallbackGauge(reg prometheus.Registerer) func(bool) {
	active := prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawlq_worker_broker_fallback",
		Help: "1 while the broker's Redis does not answer and the worker leases from its fallback shard."})
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: "crawlq_worker_broker_fallbacks_total",
		Help: "Switches to the fallback shard because the broker's Redis did not answer."})
	reg.MustRegister(active, total)
	return func(on bool) {
		if on {
			active.Set(1)
			total.Inc()
			return
		}
		active.Set(0)
	}
}
