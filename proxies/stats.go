package proxies

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Proxy states for one site, as Stats reports them.
const (
	StateReady       = "ready"
	StateLeased      = "leased"
	StateCooling     = "cooling"
	StateQuarantined = "quarantined"
)

// Stats reports per-site pool totals and per-proxy counters. It reads the
// whole pool (O(N)): it is meant for dashboards, not the lease path.
func (b *RedisBroker) Stats(ctx context.Context) (*PoolStats, error) {
	known, err := b.knownSets(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := b.snapshot(ctx, known)
	if err != nil {
		return nil, fmt.Errorf("pool stats: %w", err)
	}
	return snap.build(), nil
}

// snap is the raw Redis state Stats is built from.
type snap struct {
	now     int64
	proxies []Proxy
	known   []siteClass
	ready   map[siteClass][]redis.Z
	quar    map[siteClass]map[string]float64
	leases  map[string]map[string]string
	stats   map[string]map[string]string
	holders map[string]map[string]map[string]int64 // site -> id -> holder -> leases
}

func (b *RedisBroker) snapshot(ctx context.Context, known []siteClass) (*snap, error) {
	pipe := b.rdb.Pipeline()
	timeCmd := pipe.Time(ctx)
	specCmd := pipe.HGetAll(ctx, b.k.proxies())
	readyCmds, quarCmds := map[siteClass]*redis.ZSliceCmd{}, map[siteClass]*redis.ZSliceCmd{}
	leaseCmds, statCmds := map[string]*redis.MapStringStringCmd{}, map[string]*redis.MapStringStringCmd{}
	for _, sc := range known {
		readyCmds[sc] = pipe.ZRangeWithScores(ctx, b.k.ready(sc.site, sc.class), 0, -1)
		quarCmds[sc] = pipe.ZRangeWithScores(ctx, b.k.quarantine(sc.site, sc.class), 0, -1)
		if leaseCmds[sc.site] == nil {
			leaseCmds[sc.site] = pipe.HGetAll(ctx, b.k.leases(sc.site))
			statCmds[sc.site] = pipe.HGetAll(ctx, b.k.stats(sc.site))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	s := &snap{now: timeCmd.Val().UnixMilli() + b.cfg.skew(), known: known,
		ready: map[siteClass][]redis.Z{}, quar: map[siteClass]map[string]float64{},
		leases: map[string]map[string]string{}, stats: map[string]map[string]string{},
		holders: map[string]map[string]map[string]int64{}}
	for id, spec := range specCmd.Val() {
		p, err := b.specs.get(id, spec)
		if err != nil {
			return nil, err
		}
		s.proxies = append(s.proxies, p)
	}
	sort.Slice(s.proxies, func(i, j int) bool { return s.proxies[i].ID < s.proxies[j].ID })
	for sc, c := range readyCmds {
		s.ready[sc] = withoutMarker(c.Val())
		s.quar[sc] = zmap(quarCmds[sc].Val())
	}
	for site, c := range leaseCmds {
		s.leases[site], s.stats[site] = c.Val(), statCmds[site].Val()
		s.holders[site] = holderCounts(s.stats[site])
	}
	return s, nil
}

// holderCounts indexes the "<id>|h|<holder>" fields of one site's stats.
func holderCounts(stats map[string]string) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for k, v := range stats {
		id, rest, _ := strings.Cut(k, "|")
		h, ok := strings.CutPrefix(rest, "h|")
		if !ok {
			continue
		}
		if out[id] == nil {
			out[id] = map[string]int64{}
		}
		out[id][h], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// withoutMarker drops a ready set's sync marker ("#<version>" at -inf,
// see scripts.go), which is no proxy.
func withoutMarker(zs []redis.Z) []redis.Z {
	if len(zs) > 0 && strings.HasPrefix(zs[0].Member.(string), "#") {
		return zs[1:]
	}
	return zs
}

func zmap(zs []redis.Z) map[string]float64 {
	m := make(map[string]float64, len(zs))
	for _, z := range zs {
		m[z.Member.(string)] = z.Score
	}
	return m
}

func (s *snap) build() *PoolStats {
	ps := &PoolStats{At: ms(s.now), Total: len(s.proxies), Sites: map[string]SiteStats{}}
	byID := map[string]*ProxyStats{}
	for _, p := range s.proxies {
		ps.Proxies = append(ps.Proxies, ProxyStats{ID: p.ID, Masked: p.Masked(), Class: p.Class, Sites: map[string]ProxySiteStats{}})
	}
	for i := range ps.Proxies {
		byID[ps.Proxies[i].ID] = &ps.Proxies[i]
	}
	for _, sc := range s.known {
		s.addSet(ps, byID, sc)
	}
	return ps
}

// addSet counts one ready set into the site totals and per-proxy stats.
func (s *snap) addSet(ps *PoolStats, byID map[string]*ProxyStats, sc siteClass) {
	site := ps.Sites[sc.site]
	if site.ByClass == nil {
		site.ByClass = map[Class]StateCounts{}
	}
	counts := site.ByClass[sc.class]
	for _, z := range s.ready[sc] {
		id := z.Member.(string)
		st := s.proxySite(sc, id, z.Score)
		counts.add(st.State)
		if p := byID[id]; p != nil {
			p.Sites[sc.site] = st
		}
	}
	site.ByClass[sc.class] = counts
	site.Ready += counts.Ready
	site.Leased += counts.Leased
	site.Cooling += counts.Cooling
	site.Quarantined += counts.Quarantined
	if n := len(s.ready[sc]); n > 0 && counts.Quarantined == n && !slices.Contains(site.Exhausted, sc.class) {
		site.Exhausted = append(site.Exhausted, sc.class)
	}
	ps.Sites[sc.site] = site
}

func (c *StateCounts) add(state string) {
	switch state {
	case StateReady:
		c.Ready++
	case StateLeased:
		c.Leased++
	case StateCooling:
		c.Cooling++
	case StateQuarantined:
		c.Quarantined++
	}
}

// proxySite is one proxy's state and counters on one site.
func (s *snap) proxySite(sc siteClass, id string, score float64) ProxySiteStats {
	st := ProxySiteStats{ReadyAt: ms(int64(score))}
	stats := s.stats[sc.site]
	field := func(name string) int64 { v, _ := strconv.ParseInt(stats[id+"|"+name], 10, 64); return v }
	st.OK, st.Failed, st.Banned = field("ok"), field("fail"), field("ban")
	ewma, _ := strconv.ParseFloat(stats[id+"|ewma"], 64)
	st.EWMALatency = time.Duration(ewma * float64(time.Millisecond))
	st.LastBan = stats[id+"|lastban"]
	if at := field("lastbanat"); at > 0 {
		st.LastBanAt = ms(at)
	}
	st.LeasesByHolder = s.holders[sc.site][id]
	st.State = s.state(sc, id, score, &st)
	return st
}

func (s *snap) state(sc siteClass, id string, score float64, st *ProxySiteStats) string {
	if v, ok := s.leases[sc.site][id]; ok {
		parts := strings.SplitN(v, "|", 4)
		if len(parts) == 4 && atoi(parts[1]) > s.now {
			st.Holder = parts[2]
			return StateLeased
		}
	}
	switch {
	case s.quar[sc][id] > float64(s.now):
		return StateQuarantined
	case score > float64(s.now):
		return StateCooling
	}
	return StateReady
}

func atoi(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
