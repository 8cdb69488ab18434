package proxies

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// List returns every proxy of the pool, sorted by ID, with credentials
// (print them with Masked).
func (b *RedisBroker) List(ctx context.Context) ([]Proxy, error) {
	specs, err := b.rdb.HGetAll(ctx, b.k.proxies()).Result()
	if err != nil {
		return nil, fmt.Errorf("list proxies: %w", err)
	}
	out := make([]Proxy, 0, len(specs))
	for id, spec := range specs {
		p, err := b.specs.get(id, spec)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", id, err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListEntries is the pool as lists give it: each proxy and modem, and
// each gateway once with its slots, sorted by ID.
func (b *RedisBroker) ListEntries(ctx context.Context) ([]Entry, error) {
	ps, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	es := Entries(ps)
	sort.Slice(es, func(i, j int) bool { return es[i].ID < es[j].ID })
	return es, nil
}

// NotInPoolError refuses a removal naming IDs the pool does not hold.
type NotInPoolError struct{ IDs []string }

func (e *NotInPoolError) Error() string {
	return fmt.Sprintf("not in the pool: %s (give the IDs proxies list shows: a proxy's, a modem's or a gateway's)", strings.Join(e.IDs, ", "))
}

// RemoveEntries removes entries of the pool by ID: a proxy's or a
// modem's, a gateway's (all its slots), or one slot's. An ID the pool
// does not hold refuses the whole removal with *NotInPoolError, removing
// nothing. It returns what it removed: a slot given alone counts as a
// proxy. It reads the pool (O(N)); a gateway's slots another import adds
// between the read and the removal stay.
func (b *RedisBroker) RemoveEntries(ctx context.Context, ids ...string) (Tally, error) {
	es, err := b.ListEntries(ctx)
	if err != nil {
		return Tally{}, err
	}
	byID := map[string]Entry{}
	for _, e := range es {
		byID[e.ID] = e
		for _, slot := range e.Slots {
			byID[slot] = Entry{ID: slot}
		}
	}
	var t Tally
	var drop, missing []string
	seen := map[string]bool{}
	for _, id := range ids {
		e, ok := byID[id]
		if seen[id] {
			continue
		}
		seen[id] = true
		switch {
		case !ok:
			missing = append(missing, id)
		case e.Slots != nil:
			drop = append(drop, e.Slots...)
		default:
			drop = append(drop, id)
		}
		t.add(e.Kind(), len(e.Slots))
	}
	if len(missing) > 0 {
		return Tally{}, &NotInPoolError{IDs: missing}
	}
	_, err = b.Remove(ctx, drop...)
	return t, err
}

// Remove deletes proxies from the pool, with their leases, quarantines and
// clearance marks. It returns how many were in the pool.
func (b *RedisBroker) Remove(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := removeScript.Run(ctx, b.rdb, b.k.dropKeys(), toAny(ids)...).Int()
	if err != nil {
		return 0, fmt.Errorf("remove proxies: %w", err)
	}
	if err := b.rdb.SRem(ctx, b.k.modems(), toAny(ids)...).Err(); err != nil {
		return n, fmt.Errorf("remove proxies: %w", err)
	}
	return n, nil
}

// Unban ends the quarantine of the given proxies on every site, so they are
// ready at once. It returns how many (proxy, site) quarantines ended.
func (b *RedisBroker) Unban(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return b.unban(ctx, ids)
}

// UnbanAll ends every quarantine of the pool.
func (b *RedisBroker) UnbanAll(ctx context.Context) (int, error) { return b.unban(ctx, nil) }

func (b *RedisBroker) unban(ctx context.Context, ids []string) (int, error) {
	args := append([]any{b.cfg.skew()}, toAny(ids)...)
	n, err := unbanScript.Run(ctx, b.rdb, b.k.unbanKeys(), args...).Int()
	if err != nil {
		return 0, fmt.Errorf("unban: %w", err)
	}
	return n, nil
}

// siteClass is one ready set that leases have used.
type siteClass struct {
	site  string
	class Class
}

// quarantines reads the proxies quarantined now, per (site, proxy), with
// when each quarantine ends (Redis clock plus skew), in one script call
// (lua/quarantines.lua): O(quarantined).
func (b *RedisBroker) quarantines(ctx context.Context) (map[leaseKey]time.Time, error) {
	res, err := quarantinesScript.Run(ctx, b.rdb, b.k.quarantinesKeys(), b.cfg.skew()).Slice()
	if err != nil {
		return nil, fmt.Errorf("read quarantines: %w", err)
	}
	out := make(map[leaseKey]time.Time, len(res)/3)
	for i := 0; i+2 < len(res); i += 3 {
		site, _ := res[i].(string)
		id, _ := res[i+1].(string)
		out[leaseKey{site, id}] = ms(num(res[i+2]))
	}
	return out, nil
}

// sync rebuilds the ready set of (site, class) from the pool after an
// import or remove: O(N), once per change and ready set.
func (b *RedisBroker) sync(ctx context.Context, site string, class Class) error {
	for range 5 {
		ver, ids, err := b.eligible(ctx, site, class)
		if err != nil {
			return err
		}
		args := []any{ver, knownField(site, class)}
		for _, id := range ids {
			args = append(args, id)
		}
		ok, err := syncScript.Run(ctx, b.rdb, b.k.syncKeys(site, class), args...).Int()
		if err != nil {
			return fmt.Errorf("sync %s/%s: %w", site, class, err)
		}
		if ok == 1 {
			b.log.Debug("ready set synced", zap.String("site", site), zap.String("class", string(class)), zap.Int("proxies", len(ids)))
			return nil
		}
	}
	return fmt.Errorf("sync %s/%s: pool keeps changing, try again", site, class)
}

// eligible reads the pool version and the IDs that may serve (site, class)
// in this broker's mode.
func (b *RedisBroker) eligible(ctx context.Context, site string, class Class) (string, []string, error) {
	pipe := b.rdb.Pipeline()
	verCmd := pipe.Get(ctx, b.k.version())
	specCmd := pipe.HGetAll(ctx, b.k.proxies())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, fmt.Errorf("read pool: %w", err)
	}
	var ids []string
	parts := b.cfg.partitionSites()
	for id, spec := range specCmd.Val() {
		p, err := b.specs.get(id, spec)
		if err != nil {
			return "", nil, fmt.Errorf("proxy %s: %w", id, err)
		}
		if p.Class == class && b.serves(p, site, parts) {
			ids = append(ids, id)
		}
	}
	return verCmd.Val(), ids, nil
}

// serves reports whether p may serve site in the broker's mode.
func (b *RedisBroker) serves(p Proxy, site string, parts []string) bool {
	if b.cfg.Mode == ModePartitioned {
		return AssignSite(p, parts) == site
	}
	return p.AllowedOn(site)
}
