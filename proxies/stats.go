package proxies

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/numstr"
)

// Proxy states for one site, as Stats reports them.
const (
	StateReady       = "ready"
	StateLeased      = "leased"
	StateCooling     = "cooling"
	StateQuarantined = "quarantined"
)

// classes are the proxy classes in the order stats list them.
var classes = []Class{Datacenter, Residential, Mobile}

// Stats reports per-site pool totals and per-proxy counters. It reads the
// whole pool (O(N)): it is meant for dashboards, not the lease path. Every
// imported proxy is listed, and the sites of Config.Sites are reported
// even before any lease synced their ready sets: a proxy not yet synced
// counts as ready (the next lease makes it so). A site's Cleared counts
// the proxies of its ready sets whose clearance mark has not ended.
func (b *RedisBroker) Stats(ctx context.Context) (*PoolStats, error) {
	sets, err := b.statSets(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := b.snapshot(ctx, sets)
	if err != nil {
		return nil, fmt.Errorf("pool stats: %w", err)
	}
	ps := snap.build()
	if err := b.addExitStats(ctx, ps, snap.proxies); err != nil {
		return nil, fmt.Errorf("pool stats: %w", err)
	}
	return ps, nil
}

// statSet is one ready set Stats and Summary report, and whether it is
// synced with the pool's current version.
type statSet struct {
	siteClass
	synced bool
}

// statSets lists the ready sets in use and those of the configured sites
// (every class), sorted; sets not synced at the pool's version are marked.
func (b *RedisBroker) statSets(ctx context.Context) ([]statSet, error) {
	pipe := b.rdb.Pipeline()
	knownCmd := pipe.HGetAll(ctx, b.k.known())
	verCmd := pipe.Get(ctx, b.k.version())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read pool sites: %w", err)
	}
	ver := verCmd.Val()
	if ver == "" {
		ver = "0"
	}
	seen := map[siteClass]bool{}
	for f, v := range knownCmd.Val() {
		site, class, _ := strings.Cut(f, "\t")
		seen[siteClass{site: site, class: Class(class)}] = v == ver
	}
	for site := range b.cfg.Sites {
		for _, c := range classes {
			sc := siteClass{site: site, class: c}
			if _, ok := seen[sc]; !ok {
				seen[sc] = false
			}
		}
	}
	out := make([]statSet, 0, len(seen))
	for sc, synced := range seen {
		out = append(out, statSet{siteClass: sc, synced: synced})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j].siteClass) })
	return out, nil
}

func (a siteClass) less(b siteClass) bool {
	if a.site != b.site {
		return a.site < b.site
	}
	return a.class < b.class
}

// snap is the raw Redis state Stats is built from.
type snap struct {
	now     int64
	proxies []Proxy
	known   []siteClass
	ready   map[siteClass][]redis.Z
	quar    map[siteClass]map[string]float64
	leases  map[string]map[string]string
	stats   map[string]map[string]*counters // site -> id -> counters
	cleared map[string]map[string]float64   // site -> id -> end of its clearance (ms)
}

// counters are one proxy's stats fields on one site.
type counters struct {
	ok, fail, ban, lastBanAt int64
	ewma                     float64
	lastBan                  string
	holders                  map[string]int64
}

// scanCount is the COUNT hint of the scans Stats reads the pool with:
// each call is short, so a read of a big pool never keeps Redis from
// serving leases for long.
const scanCount = 1000

// snapshot reads the pool key by key with HSCAN and ZSCAN, not in one
// atomic step: it is a dashboard's view, and a proxy whose state changes
// during the read shows either state.
func (b *RedisBroker) snapshot(ctx context.Context, sets []statSet) (*snap, error) {
	now, err := b.rdb.Time(ctx).Result()
	if err != nil {
		return nil, err
	}
	s := &snap{now: now.UnixMilli() + b.cfg.skew(),
		ready: map[siteClass][]redis.Z{}, quar: map[siteClass]map[string]float64{},
		leases: map[string]map[string]string{}, stats: map[string]map[string]*counters{},
		cleared: map[string]map[string]float64{}}
	if err := b.readProxies(ctx, s); err != nil {
		return nil, err
	}
	parts := b.cfg.partitionSites()
	for _, sc := range sets {
		if err := b.readSet(ctx, s, sc, parts); err != nil {
			return nil, err
		}
		if _, ok := s.leases[sc.site]; ok {
			continue
		}
		if err := b.readSite(ctx, s, sc.site); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// readSite reads one site's leases, counters and clearance marks.
func (b *RedisBroker) readSite(ctx context.Context, s *snap, site string) error {
	var err error
	if s.leases[site], err = scanHash(ctx, b.rdb, b.k.leases(site)); err != nil {
		return err
	}
	stats, err := scanHash(ctx, b.rdb, b.k.stats(site))
	if err != nil {
		return err
	}
	s.stats[site] = indexStats(stats)
	cleared, err := scanZSet(ctx, b.rdb, b.k.cleared(site))
	if err != nil {
		return err
	}
	s.cleared[site] = zmap(cleared)
	return nil
}

// readProxies reads every proxy's spec, sorted by ID.
func (b *RedisBroker) readProxies(ctx context.Context, s *snap) error {
	specs, err := scanHash(ctx, b.rdb, b.k.proxies())
	if err != nil {
		return err
	}
	s.proxies = make([]Proxy, 0, len(specs))
	for id, spec := range specs {
		p, err := b.specs.get(id, spec)
		if err != nil {
			return err
		}
		s.proxies = append(s.proxies, p)
	}
	sort.Slice(s.proxies, func(i, j int) bool { return s.proxies[i].ID < s.proxies[j].ID })
	return nil
}

// readSet reads one ready set and its quarantines; an unsynced set is
// completed with the proxies the next sync adds.
func (b *RedisBroker) readSet(ctx context.Context, s *snap, sc statSet, parts []string) error {
	zs, err := scanZSet(ctx, b.rdb, b.k.ready(sc.site, sc.class))
	if err != nil {
		return err
	}
	if !sc.synced {
		zs = b.unsynced(s.proxies, sc.siteClass, zs, parts)
	}
	if len(zs) == 0 && !sc.synced {
		return nil // a configured site no proxy of the class may serve
	}
	quar, err := scanZSet(ctx, b.rdb, b.k.quarantine(sc.site, sc.class))
	if err != nil {
		return err
	}
	s.known = append(s.known, sc.siteClass)
	s.ready[sc.siteClass], s.quar[sc.siteClass] = zs, zmap(quar)
	return nil
}

// scanHash reads a hash with HSCAN.
func scanHash(ctx context.Context, rdb redis.UniversalClient, key string) (map[string]string, error) {
	out := map[string]string{}
	var cursor uint64
	for {
		kv, next, err := rdb.HScan(ctx, key, cursor, "", scanCount).Result()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// scanZSet reads a sorted set with ZSCAN, without the sync marker
// ("#<version>", see lua/lib/fresh.lua), which is no proxy; members come once
// each, in no order.
func scanZSet(ctx context.Context, rdb redis.UniversalClient, key string) ([]redis.Z, error) {
	seen := map[string]float64{}
	var cursor uint64
	for {
		kv, next, err := rdb.ZScan(ctx, key, cursor, "", scanCount).Result()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if strings.HasPrefix(kv[i], "#") {
				continue
			}
			score, err := strconv.ParseFloat(kv[i+1], 64)
			if err != nil {
				return nil, fmt.Errorf("read %s: score of %s: %w", key, kv[i], err)
			}
			seen[kv[i]] = score
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	out := make([]redis.Z, 0, len(seen))
	for m, sc := range seen {
		out = append(out, redis.Z{Member: m, Score: sc})
	}
	return out, nil
}

// unsynced is the ready set of sc as the next sync will make it: the
// proxies that may serve it, at their current score, new ones at 0.
func (b *RedisBroker) unsynced(ps []Proxy, sc siteClass, zs []redis.Z, parts []string) []redis.Z {
	score := make(map[string]float64, len(zs))
	for _, z := range zs {
		score[z.Member.(string)] = z.Score
	}
	out := []redis.Z{}
	for _, p := range ps {
		if p.Class == sc.class && b.serves(p, sc.site, parts) {
			out = append(out, redis.Z{Member: p.ID, Score: score[p.ID]})
		}
	}
	return out
}

// indexStats parses one site's stats hash ("<id>|<field>", see keys.go)
// into counters per proxy, in one pass.
func indexStats(stats map[string]string) map[string]*counters {
	out := map[string]*counters{}
	for k, v := range stats {
		id, field, ok := strings.Cut(k, "|")
		if !ok {
			continue
		}
		c := out[id]
		if c == nil {
			c = &counters{}
			out[id] = c
		}
		c.set(field, v)
	}
	return out
}

func (c *counters) set(field, v string) {
	switch field {
	case "ok":
		c.ok = numstr.Int64(v)
	case "fail":
		c.fail = numstr.Int64(v)
	case "ban":
		c.ban = numstr.Int64(v)
	case "lastbanat":
		c.lastBanAt = numstr.Int64(v)
	case "lastban":
		c.lastBan = v
	case "ewma":
		c.ewma, _ = strconv.ParseFloat(v, 64)
	default:
		if h, ok := strings.CutPrefix(field, "h|"); ok {
			if c.holders == nil {
				c.holders = map[string]int64{}
			}
			c.holders[h] = numstr.Int64(v)
		}
	}
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
	ps.Proxies = make([]ProxyStats, 0, len(s.proxies))
	byID := make(map[string]*ProxyStats, len(s.proxies))
	for _, p := range s.proxies {
		ps.Proxies = append(ps.Proxies, ProxyStats{ID: p.ID, Masked: p.Masked(), Class: p.Class,
			Allowed: p.Sites, Sites: map[string]ProxySiteStats{}})
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
		if s.cleared[sc.site][id] > float64(s.now) {
			site.Cleared++
		}
		if p := byID[id]; p != nil {
			p.Sites[sc.site] = st
		}
	}
	site.ByClass[sc.class] = counts
	site.addCounts(counts)
	if n := len(s.ready[sc]); n > 0 && counts.Quarantined == n && !slices.Contains(site.Exhausted, sc.class) {
		site.Exhausted = append(site.Exhausted, sc.class)
	}
	ps.Sites[sc.site] = site
}

func (st *SiteStats) addCounts(c StateCounts) {
	st.Ready += c.Ready
	st.Leased += c.Leased
	st.Cooling += c.Cooling
	st.Quarantined += c.Quarantined
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
	if c := s.stats[sc.site][id]; c != nil {
		st.OK, st.Failed, st.Banned = c.ok, c.fail, c.ban
		st.EWMALatency = time.Duration(c.ewma * float64(time.Millisecond))
		st.LastBan = c.lastBan
		if c.lastBanAt > 0 {
			st.LastBanAt = ms(c.lastBanAt)
		}
		st.LeasesByHolder = c.holders
	}
	st.State = s.state(sc, id, score, &st)
	return st
}

func (s *snap) state(sc siteClass, id string, score float64, st *ProxySiteStats) string {
	if v, ok := s.leases[sc.site][id]; ok {
		parts := strings.SplitN(v, "|", 4)
		if len(parts) == 4 && numstr.Int64(parts[1]) > s.now {
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
