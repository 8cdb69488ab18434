package proxies

import (
	"context"
	"sort"
	"time"
)

// GatewayStats is one gateway of the pool: its slots and how many are
// leased now, on any site.
type GatewayStats struct {
	// ID is the slots' common ID (a slot's is ID-<slot>).
	ID     string `json:"id"`
	Masked string `json:"proxy"`
	Slots  int    `json:"slots"`
	Leased int    `json:"leased"`
	// TTL and Idle are the provider's session times; Exit how crawlq
	// learns the exit ("header:NAME" or "probe").
	TTL      time.Duration `json:"ttl"`
	Idle     time.Duration `json:"idle"`
	Exit     string        `json:"exit"`
	Rotating bool          `json:"rotating,omitempty"`
}

// gatewaysOf groups ps's gateway slots into their gateways, sorted by ID.
func gatewaysOf(ps *PoolStats, specs []Proxy) []GatewayStats {
	byID := map[string]*GatewayStats{}
	leased := map[string]bool{}
	for _, p := range ps.Proxies {
		for _, st := range p.Sites {
			leased[p.ID] = leased[p.ID] || st.State == "leased"
		}
	}
	for _, p := range specs {
		if p.Gateway == nil {
			continue
		}
		id := p.GatewayID()
		g := byID[id]
		if g == nil {
			g = &GatewayStats{ID: id, Masked: p.Masked(), TTL: p.Gateway.TTL, Idle: p.Gateway.Idle,
				Exit: exitName(p.Exit), Rotating: p.Gateway.Rotating}
			byID[id] = g
		}
		g.Slots++
		if leased[p.ID] {
			g.Leased++
		}
	}
	out := make([]GatewayStats, 0, len(byID))
	for _, g := range byID {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func exitName(e *ExitSource) string {
	switch {
	case e == nil:
		return ""
	case e.Header != "":
		return "header:" + e.Header
	}
	return "probe"
}

// addExitStats fills each site's exit-IP figures when the pool has a
// proxy that learns its exit.
func (b *RedisBroker) addExitStats(ctx context.Context, ps *PoolStats, specs []Proxy) error {
	ps.Gateways = gatewaysOf(ps, specs)
	var err error
	if ps.Modems, err = b.modemsIfAny(ctx); err != nil {
		return err
	}
	learns := len(ps.Gateways) > 0
	for _, p := range specs {
		learns = learns || p.LearnsExit()
	}
	if !learns {
		return nil
	}
	for name, site := range ps.Sites {
		st, err := b.ExitStats(ctx, name)
		if err != nil {
			return err
		}
		site.Exits = &st
		ps.Sites[name] = site
	}
	return nil
}
