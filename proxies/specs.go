package proxies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// leasedProxy is the spec of a lease reply's proxy: the reply's spec when
// the script sent one (set is not of the ready set's marker; then set is
// reloaded), else set's.
func (b *RedisBroker) leasedProxy(ctx context.Context, res []any, set *specSet) (Proxy, error) {
	id, _ := res[1].(string)
	if len(res) > 7 {
		spec, _ := res[7].(string)
		marker, _ := res[5].(string)
		b.reloadSpecs(ctx, marker)
		return b.specs.get(id, spec)
	}
	if p, ok := set.m[id]; ok {
		return p, nil
	}
	// not in the pool when set was loaded at this marker: cannot happen
	// unless the pool changed in between; read the spec itself
	spec, err := b.rdb.HGet(ctx, b.k.proxies(), id).Result()
	if err != nil {
		return Proxy{}, fmt.Errorf("read spec: %w", err)
	}
	return b.specs.get(id, spec)
}

// specSet is every proxy spec of the pool at one sync marker
// ("#<version>"). It is never changed once built.
type specSet struct {
	ver string
	m   map[string]Proxy
}

// marker is ARGV[9] of the lease scripts: "" when nothing is loaded.
func (s *specSet) marker() string {
	if s == nil {
		return ""
	}
	return s.ver
}

// proxy is the loaded spec of id, if s has it.
func (s *specSet) proxy(id string) (Proxy, bool) {
	if s == nil {
		return Proxy{}, false
	}
	p, ok := s.m[id]
	return p, ok
}

// reloadSpecs loads every spec at once when a lease saw a ready set whose
// marker is not the loaded one, so the following leases skip the spec.
// One caller at a time loads; the others go on with their reply's spec.
// A failed load is only logged: the lease has its spec anyway.
func (b *RedisBroker) reloadSpecs(ctx context.Context, marker string) {
	if marker == "" || b.loaded.Load().marker() == marker || !b.loading.TryLock() {
		return
	}
	defer b.loading.Unlock()
	pipe := b.rdb.TxPipeline()
	verCmd := pipe.Get(ctx, b.k.version())
	specCmd := pipe.HGetAll(ctx, b.k.proxies())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		b.log.Warn("load proxy specs", zap.Error(err))
		return
	}
	ver := verCmd.Val()
	if ver == "" {
		ver = "0"
	}
	set := &specSet{ver: "#" + ver, m: make(map[string]Proxy, len(specCmd.Val()))}
	for id, spec := range specCmd.Val() {
		p, err := b.specs.get(id, spec)
		if err != nil {
			b.log.Warn("load proxy specs", zap.String("proxy", id), zap.Error(err))
			return
		}
		set.m[id] = p
	}
	b.loaded.Store(set)
}

// specCache maps proxy IDs to decoded specs, so leases don't re-parse
// JSON; an entry is used only while its spec text is the stored one (a
// re-import may change a proxy's class, sites or labels).
type specCache struct {
	mu sync.RWMutex
	m  map[string]cachedSpec
}

type cachedSpec struct {
	spec string
	p    Proxy
}

// get returns the decoded spec of id.
func (c *specCache) get(id, spec string) (Proxy, error) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if ok && e.spec == spec {
		return e.p, nil
	}
	var p Proxy
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		return Proxy{}, fmt.Errorf("bad stored spec: %w", err)
	}
	c.mu.Lock()
	c.m[id] = cachedSpec{spec: spec, p: p}
	c.mu.Unlock()
	return p, nil
}
