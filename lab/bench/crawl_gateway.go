package bench

import (
	"fmt"
	"math"
	"strings"

	"crawlq/proxies"
	"crawlq/testbed"
)

// The bench gateway's customer credentials (loopback only).
const (
	gatewayUser     = "bench-customer-zone-res"
	gatewayPassword = "bench-gw-pass"
)

// GatewayPhase is a phase's figures of the gateway.
type GatewayPhase struct {
	// Sessions counts the gateway sessions started (a session id's first
	// use, or its first after it expired), Collisions those the gateway
	// put on an exit IP another live session held, ExitsUsed the distinct
	// exit IPs that carried traffic (testbed.GatewayStats).
	Sessions   int `json:"sessions"`
	Collisions int `json:"collisions"`
	ExitsUsed  int `json:"exits_used"`
	// SitePages are the OK pages the site served over the whole phase,
	// the denominator of the per-page figures.
	SitePages int `json:"site_pages"`
	// Probes, Rerolls and Waits are the workers' exit figures over the
	// phase (sessions.ExitCounts): exit IPs learned, new session ids
	// taken because the exit drawn was held or quarantined, and waits
	// for a held exit. All 0 in the naive phase (plain lines).
	Probes         int64   `json:"probes"`
	Rerolls        int64   `json:"rerolls"`
	Waits          int64   `json:"waits"`
	ProbesPerPage  float64 `json:"probes_per_page"`
	RerollsPerPage float64 `json:"rerolls_per_page"`
	WaitsPerPage   float64 `json:"waits_per_page"`
}

// ips is the IPs the site can see: the gateway's exits, else the farm.
func (o CrawlOptions) ips() int {
	if o.Gateway > 0 {
		return o.Gateway
	}
	if o.Modems > 0 {
		return o.Modems
	}
	return o.Proxies
}

// GatewayConcurrency is the job slots per worker through a gateway of
// exits exit IPs: the workers' share of two thirds of the exits, at least
// 4. A slot's session keeps its exit from job to job, so sessions about
// as many as the exits keep them busy. Before the broker paced gateway
// slots by their exits (840d9c2), more landed on exits others held and
// re-rolled (probed) again and again: measured at 40 exits, 200 session
// ids and D = 200 ms (20 s windows, load about 1), 21 to 36 slots in all
// 191.8-194.6 pages/s, 48 slots 176.8 and 60 slots 156.2, with over 4
// probes a page; since, 60 slots read as 27 (docs/benchmarks.md).
func GatewayConcurrency(exits, workers int) int {
	return max(4, int(math.Ceil(float64(exits)*2/3/float64(max(workers, 1)))))
}

// farmSize is the testbed's farm: P, or one idle proxy beside a gateway
// or modems (the testbed always runs a farm).
func (r *crawlRun) farmSize() int {
	if r.o.Gateway > 0 || r.o.Modems > 0 {
		return 1
	}
	return r.o.Proxies
}

// gatewayConfig is the testbed's gateway with CrawlOptions.Gateway exit
// IPs and the provider's default TTL and idle time; nil without one.
func (r *crawlRun) gatewayConfig() *testbed.GatewayConfig {
	if r.o.Gateway <= 0 {
		return nil
	}
	return &testbed.GatewayConfig{Exits: r.o.Gateway, User: gatewayUser, Password: gatewayPassword, Seed: r.o.Seed}
}

// phaseProxies is what a phase imports: the farm's list; with a gateway,
// its line of GatewaySessions session ids, or those session ids as plain
// lines for a policy that knows no gateways.
func (r *crawlRun) phaseProxies(tb *testbed.Testbed, pol policy) ([]proxies.Proxy, error) {
	if tb.Modems != nil {
		return modemProxies(tb, pol.modems)
	}
	if tb.Gateway == nil {
		return proxies.ParseFile(tb.ProxiesFile)
	}
	ps, err := proxies.ParseReader(strings.NewReader(tb.GatewayLine(r.o.GatewaySessions)), "gateway.txt")
	if err != nil || !pol.gatewayAsLines {
		return ps, err
	}
	return plainSessions(ps, pol.name)
}

// plainSessions turns a gateway's slots into plain proxies, each with a
// fixed session id of its own (prefix and its slot): how the gateway is
// used by a crawler that cannot hold its exit IPs.
func plainSessions(slots []proxies.Proxy, prefix string) ([]proxies.Proxy, error) {
	out := make([]proxies.Proxy, 0, len(slots))
	for _, p := range slots {
		q, err := proxies.ParseLine(p.WithSession(fmt.Sprintf("%s%d", prefix, p.Gateway.Slot)).String())
		if err != nil {
			return nil, fmt.Errorf("gateway slot %d as a plain line: %w", p.Gateway.Slot, err)
		}
		out = append(out, q)
	}
	return out, nil
}

// gatewayFigures reads the gateway's and the workers' exit figures once
// the phase's workers stopped; nil without a gateway.
func gatewayFigures(env *phaseEnv, site string) *GatewayPhase {
	if env.tb.Gateway == nil {
		return nil
	}
	st := env.tb.Gateway.Stats()
	g := &GatewayPhase{Sessions: st.Sessions, Collisions: st.Collisions, ExitsUsed: st.Exits,
		SitePages: sitePages(env.tb.Log.Entries(), site)}
	for _, w := range env.workers {
		c := w.Sessions().ExitCounts()
		g.Probes, g.Rerolls, g.Waits = g.Probes+c.Probes, g.Rerolls+c.Rerolls, g.Waits+c.Waits
	}
	if g.SitePages > 0 {
		n := float64(g.SitePages)
		g.ProbesPerPage, g.RerollsPerPage, g.WaitsPerPage = round3(float64(g.Probes)/n), round3(float64(g.Rerolls)/n), round3(float64(g.Waits)/n)
	}
	return g
}

// sitePages counts the OK pages site served.
func sitePages(entries []testbed.Entry, site string) int {
	n := 0
	for _, e := range entries {
		if e.Site == site && e.Verdict == testbed.VerdictOK {
			n++
		}
	}
	return n
}
