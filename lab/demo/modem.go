package demo

import (
	"fmt"
	"io"
	"strings"
	"time"

	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// The demo modems: credentials (loopback only), the provider's limits
// (a change at most every 5 s, 1 s to settle: a provider's minute and
// ten seconds, scaled to a two-minute demo) and Avito's rotate_after, so
// a modem changes its IP before Avito, which bans by IP, would notice.
const (
	modemUser        = "demo-modem"
	modemPassword    = "demo-modem-pass"
	modemEvery       = 5 * time.Second
	modemSettle      = time.Second
	avitoRotateAfter = 4
)

// ModemSummary is what the mobile modems beside the farm did.
type ModemSummary struct {
	Modems int `json:"modems"`
	// Rotations are the IP changes the modem node accepted, Failed the
	// rotations the workers gave up on (the modem quarantined instead).
	Rotations int   `json:"rotations"`
	Failed    int64 `json:"failed"`
	// Requests are the requests the modems carried; WhileSettling those
	// that reached a modem while it changed IP and TooSoon the changes
	// closer than the provider allows (both 0 when crawlq keeps I9).
	Requests      int `json:"requests"`
	WhileSettling int `json:"while_settling"`
	TooSoon       int `json:"too_soon"`
}

// modemConfig is the testbed's modem node: cfg.Modems modems; nil
// without.
func modemConfig(cfg Config) *testbed.ModemConfig {
	if cfg.Modems <= 0 {
		return nil
	}
	return &testbed.ModemConfig{N: cfg.Modems, MinInterval: modemEvery, Settle: modemSettle,
		User: modemUser, Password: modemPassword, Seed: cfg.Seed}
}

// modemProxies are the modems' lines, with their change links; none
// without modems.
func (c *cluster) modemProxies() ([]proxies.Proxy, error) {
	if c.tb.Modems == nil {
		return nil, nil
	}
	ps, err := proxies.ParseReader(strings.NewReader(strings.Join(c.tb.ModemLines(), "\n")), "modems.txt")
	if err != nil {
		return nil, fmt.Errorf("read the modems' lines: %w", err)
	}
	return ps, nil
}

// modemSummary sums up the modem node's record with the workers'
// rotation figures; nil without modems.
func (c *cluster) modemSummary(counts sessions.ModemCounts) *ModemSummary {
	m := c.tb.Modems
	if m == nil {
		return nil
	}
	st := m.Stats()
	sum := &ModemSummary{Modems: m.Len(), Rotations: len(st.Rotations), Failed: counts.Failed,
		WhileSettling: len(st.WhileSettling), TooSoon: st.TooSoon}
	for _, n := range st.Requests {
		sum.Requests += n
	}
	return sum
}

// writeModems writes the modems' line of the summary.
func (s *Summary) writeModems(w io.Writer) {
	m := s.Modems
	if m == nil {
		return
	}
	fmt.Fprintf(w, "modems: %d with change links (Avito rotate_after %d): %d rotations (%d failed), %d requests through them; %d requests while settling, %d changes too soon\n",
		m.Modems, avitoRotateAfter, m.Rotations, m.Failed, m.Requests, m.WhileSettling, m.TooSoon)
}
