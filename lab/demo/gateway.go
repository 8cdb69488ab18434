package demo

import (
	"fmt"
	"io"
	"strings"

	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// The demo gateway's customer credentials (loopback only).
const (
	gatewayUser     = "demo-customer-zone-res"
	gatewayPassword = "demo-gw-pass"
)

// GatewaySummary is what the gateway proxy beside the farm did.
type GatewaySummary struct {
	// Exits are its exit IPs, SessionIDs the session ids its line allows
	// (the pool's slots of it), ExitsUsed the exit IPs that carried
	// traffic.
	Exits      int `json:"exits"`
	SessionIDs int `json:"session_ids"`
	ExitsUsed  int `json:"exits_used"`
	// Sessions counts the gateway sessions started, Collisions those it
	// put on an exit IP another live session held (testbed.GatewayStats).
	Sessions   int `json:"sessions"`
	Collisions int `json:"collisions"`
	// Probes, Rerolls and Waits are the workers' exit figures
	// (sessions.ExitCounts): exit IPs learned, new session ids taken
	// because the exit drawn was held or quarantined, waits for a held
	// exit.
	Probes  int64 `json:"probes"`
	Rerolls int64 `json:"rerolls"`
	Waits   int64 `json:"waits"`
	// Requests are the site requests from the gateway's exit IPs, Pages
	// the ones served normally.
	Requests int `json:"requests"`
	Pages    int `json:"pages"`
}

// gatewayConfig is the testbed's gateway: cfg.GatewayExits exit IPs with
// a provider's default TTL and idle time; nil without one.
func gatewayConfig(cfg Config) *testbed.GatewayConfig {
	if cfg.GatewayExits <= 0 {
		return nil
	}
	return &testbed.GatewayConfig{Exits: cfg.GatewayExits, User: gatewayUser, Password: gatewayPassword, Seed: cfg.Seed}
}

// gatewayProxies are the slots of the gateway's line with
// cfg.GatewaySessions session ids; none without a gateway.
func (c *cluster) gatewayProxies(cfg Config) ([]proxies.Proxy, error) {
	if c.tb.Gateway == nil {
		return nil, nil
	}
	ps, err := proxies.ParseReader(strings.NewReader(c.tb.GatewayLine(cfg.GatewaySessions)), "gateway.txt")
	if err != nil {
		return nil, fmt.Errorf("read the gateway's line: %w", err)
	}
	return ps, nil
}

// gatewaySummary sums up the gateway with the workers' exit figures; nil
// without a gateway.
func (c *cluster) gatewaySummary(cfg Config, counts sessions.ExitCounts) *GatewaySummary {
	g := c.tb.Gateway
	if g == nil {
		return nil
	}
	st := g.Stats()
	sum := &GatewaySummary{Exits: cfg.GatewayExits, SessionIDs: cfg.GatewaySessions, ExitsUsed: st.Exits,
		Sessions: st.Sessions, Collisions: st.Collisions, Probes: counts.Probes, Rerolls: counts.Rerolls, Waits: counts.Waits}
	exits := map[string]bool{}
	for _, ip := range g.ExitIPs() {
		exits[ip] = true
	}
	for _, e := range c.tb.Log.Entries() {
		if !exits[e.IP] || e.Verdict == testbed.VerdictExempt {
			continue
		}
		sum.Requests++
		if e.Verdict == testbed.VerdictOK {
			sum.Pages++
		}
	}
	return sum
}

// writeGateway writes the gateway's line of the summary.
func (s *Summary) writeGateway(w io.Writer) {
	g := s.Gateway
	if g == nil {
		return
	}
	fmt.Fprintf(w, "gateway: %d session ids on %d exit IPs (%d used): %d site requests from its exits (%d pages); %d exit probes, %d re-rolls, %d waits; %d gateway sessions, %d put on an exit another held\n",
		g.SessionIDs, g.Exits, g.ExitsUsed, g.Requests, g.Pages, g.Probes, g.Rerolls, g.Waits, g.Sessions, g.Collisions)
}
