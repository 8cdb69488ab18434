package proxies

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"crawlq/internal/numstr"
)

// PoolSummary is the pool per site and class without per-proxy detail:
// what a dashboard refreshes every few seconds and /metrics reports.
type PoolSummary struct {
	// At is the Redis clock time of the summary.
	At    time.Time            `json:"at"`
	Total int                  `json:"total"`
	Sites map[string]SiteStats `json:"sites"`
	// Modems are the pool's modem figures, when it has modems.
	Modems *ModemStats `json:"modems,omitempty"`
	// Limits are the pool's learned limits with their latest changes.
	Limits []LearnedLimit `json:"limits,omitempty"`
}

// Summary counts the pool's proxies by site, class and state, and the
// cleared proxies by site, without reading the pool: O(log N) per ready
// set and per site plus the live leases, one round trip (a second one
// reads the proxies' specs while a ready set is not synced yet, e.g. after
// an import before any lease). Its counts are those of Stats (for Cleared,
// see SiteStats).
func (b *RedisBroker) Summary(ctx context.Context) (*PoolSummary, error) {
	sets, err := b.statSets(ctx)
	if err != nil {
		return nil, err
	}
	pipe := b.rdb.Pipeline()
	timeCmd := pipe.Time(ctx)
	totalCmd := pipe.HLen(ctx, b.k.proxies())
	leaseCmds := map[string]*redis.MapStringStringCmd{}
	for _, sc := range sets {
		if leaseCmds[sc.site] == nil {
			leaseCmds[sc.site] = pipe.HGetAll(ctx, b.k.leases(sc.site))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("pool summary: %w", err)
	}
	now := timeCmd.Val().UnixMilli() + b.cfg.skew()
	live, err := b.liveLeases(ctx, leaseCmds, now)
	if err != nil {
		return nil, err
	}
	counts, cleared, err := b.countSets(ctx, sets, now, live)
	if err != nil {
		return nil, err
	}
	sum := summarize(ms(now), int(totalCmd.Val()), sets, counts, cleared)
	if err := b.addSiteExits(ctx, sum.Sites); err != nil {
		return nil, err
	}
	if sum.Modems, err = b.modemsIfAny(ctx); err != nil {
		return nil, err
	}
	sum.Limits, err = b.LearnedLimits(ctx, LimitChangesShown)
	return sum, err
}

// modemsIfAny is ModemStats for a pool with modems, else nil.
func (b *RedisBroker) modemsIfAny(ctx context.Context) (*ModemStats, error) {
	st, err := b.ModemStats(ctx)
	if err != nil || st.Modems == 0 {
		return nil, err
	}
	return &st, nil
}

// addSiteExits gives each site that has ever held an exit IP its exit
// figures (three O(1) or O(log N) reads a site).
func (b *RedisBroker) addSiteExits(ctx context.Context, sites map[string]SiteStats) error {
	for name, site := range sites {
		st, err := b.ExitStats(ctx, name)
		if err != nil {
			return fmt.Errorf("pool summary: %w", err)
		}
		if st.Seen > 0 {
			site.Exits = &st
			sites[name] = site
		}
	}
	return nil
}

// liveLeases counts the unexpired leases per site and class (the class
// read from the pool for the leased proxies only).
func (b *RedisBroker) liveLeases(ctx context.Context, leases map[string]*redis.MapStringStringCmd, now int64) (map[siteClass]int, error) {
	bySite := map[string][]string{}
	var ids []string
	for site, c := range leases {
		for id, v := range c.Val() {
			parts := strings.SplitN(v, "|", 4)
			if len(parts) == 4 && numstr.Int64(parts[1]) > now {
				bySite[site] = append(bySite[site], id)
				ids = append(ids, id)
			}
		}
	}
	out := map[siteClass]int{}
	if len(ids) == 0 {
		return out, nil
	}
	cls, err := b.rdb.HMGet(ctx, b.k.classes(), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("pool summary: read classes: %w", err)
	}
	class := make(map[string]Class, len(ids))
	for i, id := range ids {
		if s, ok := cls[i].(string); ok {
			class[id] = Class(s)
		}
	}
	for site, ids := range bySite {
		for _, id := range ids {
			out[siteClass{site: site, class: class[id]}]++
		}
	}
	return out, nil
}

// setCount is one ready set's members and states.
type setCount struct {
	StateCounts
	members int
}

// countSets counts every set: synced ones with ZCOUNTs, the others from
// the proxies that may serve them; and each site's live clearance marks,
// in the same pipeline.
func (b *RedisBroker) countSets(ctx context.Context, sets []statSet, now int64, live map[siteClass]int) (map[siteClass]setCount, map[string]int, error) {
	nowArg := strconv.FormatInt(now, 10)
	pipe := b.rdb.Pipeline()
	type cmds struct{ card, marker, ready, quar *redis.IntCmd }
	cs := map[siteClass]cmds{}
	for _, sc := range sets {
		ready, quar := b.k.ready(sc.site, sc.class), b.k.quarantine(sc.site, sc.class)
		cs[sc.siteClass] = cmds{card: pipe.ZCard(ctx, ready), marker: pipe.ZCount(ctx, ready, "-inf", "-inf"),
			ready: pipe.ZCount(ctx, ready, "(-inf", nowArg), quar: pipe.ZCount(ctx, quar, "("+nowArg, "+inf")}
	}
	clearedCmds := b.countCleared(ctx, pipe, sets, nowArg)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("pool summary: %w", err)
	}
	eligible, err := b.eligibleCounts(ctx, sets)
	if err != nil {
		return nil, nil, err
	}
	out := map[siteClass]setCount{}
	for _, sc := range sets {
		c := cs[sc.siteClass]
		n := setCount{members: int(c.card.Val() - c.marker.Val())}
		n.Leased, n.Quarantined, n.Ready = live[sc.siteClass], int(c.quar.Val()), int(c.ready.Val())
		if !sc.synced { // proxies the next sync adds are ready at once
			n.Ready += max(0, eligible[sc.siteClass]-n.members)
			n.members = eligible[sc.siteClass]
		}
		n.Ready = max(0, min(n.Ready, n.members-n.Quarantined-n.Leased))
		n.Cooling = max(0, n.members-n.Ready-n.Leased-n.Quarantined)
		out[sc.siteClass] = n
	}
	cleared := make(map[string]int, len(clearedCmds))
	for site, c := range clearedCmds {
		cleared[site] = int(c.Val())
	}
	return out, cleared, nil
}

// countCleared queues in pipe one ZCOUNT per site of the clearance marks
// that end after now (a mark that ended is pruned lazily, not at once).
func (b *RedisBroker) countCleared(ctx context.Context, pipe redis.Pipeliner, sets []statSet, nowArg string) map[string]*redis.IntCmd {
	out := map[string]*redis.IntCmd{}
	for _, sc := range sets {
		if out[sc.site] == nil {
			out[sc.site] = pipe.ZCount(ctx, b.k.cleared(sc.site), "("+nowArg, "+inf")
		}
	}
	return out
}

// eligibleCounts counts the proxies that may serve each unsynced set,
// reading the pool once if any set is unsynced.
func (b *RedisBroker) eligibleCounts(ctx context.Context, sets []statSet) (map[siteClass]int, error) {
	out := map[siteClass]int{}
	var todo []siteClass
	for _, sc := range sets {
		if !sc.synced {
			todo = append(todo, sc.siteClass)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	ps, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	parts := b.cfg.partitionSites()
	for _, p := range ps {
		for _, sc := range todo {
			if p.Class == sc.class && b.serves(p, sc.site, parts) {
				out[sc]++
			}
		}
	}
	return out, nil
}

// summarize folds the set counts into sites, with each site's cleared
// proxies; an unsynced set without any proxy that may serve it is left
// out, as Stats does.
func summarize(at time.Time, total int, sets []statSet, counts map[siteClass]setCount, cleared map[string]int) *PoolSummary {
	ps := &PoolSummary{At: at, Total: total, Sites: map[string]SiteStats{}}
	for _, sc := range sets {
		n := counts[sc.siteClass]
		if n.members == 0 && !sc.synced {
			continue
		}
		site := ps.Sites[sc.site]
		if site.ByClass == nil {
			site.ByClass = map[Class]StateCounts{}
		}
		site.ByClass[sc.class] = n.StateCounts
		site.addCounts(n.StateCounts)
		site.Cleared = cleared[sc.site]
		if n.members > 0 && n.Quarantined == n.members {
			site.Exhausted = append(site.Exhausted, sc.class)
		}
		ps.Sites[sc.site] = site
	}
	return ps
}
