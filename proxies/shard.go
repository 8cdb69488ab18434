package proxies

import (
	"hash/fnv"
	"sort"
	"strconv"
)

// Sharder statically assigns proxy IDs to servers, for shared-nothing runs
// and the fallback pool.
type Sharder interface {
	// Owner is the server that owns the proxy ID ("" with no servers).
	Owner(id string) string
}

// Modulo assigns hash(id) mod n: simple, but adding a server moves most
// proxies.
type Modulo struct{ servers []string }

// NewModulo shards over servers, in the given order.
func NewModulo(servers []string) *Modulo { return &Modulo{servers: append([]string(nil), servers...)} }

// Owner implements Sharder.
func (m *Modulo) Owner(id string) string {
	if len(m.servers) == 0 {
		return ""
	}
	return m.servers[hash64(id)%uint64(len(m.servers))]
}

// DefaultVirtualNodes is the number of ring points per server of NewRing.
const DefaultVirtualNodes = 160

// Ring is consistent hashing with virtual nodes: adding a server to n moves
// about 1/(n+1) of the proxies.
type Ring struct {
	points []uint64
	owners map[uint64]string
}

// NewRing builds a ring over servers with vnodes points each (<= 0:
// DefaultVirtualNodes).
func NewRing(servers []string, vnodes int) *Ring {
	if vnodes <= 0 {
		vnodes = DefaultVirtualNodes
	}
	r := &Ring{owners: make(map[uint64]string, len(servers)*vnodes)}
	for _, s := range servers {
		for v := range vnodes {
			h := hash64(s + "#" + strconv.Itoa(v))
			if _, dup := r.owners[h]; !dup {
				r.owners[h] = s
				r.points = append(r.points, h)
			}
		}
	}
	sort.Slice(r.points, func(i, j int) bool { return r.points[i] < r.points[j] })
	return r
}

// Owner implements Sharder: the first ring point at or after hash(id).
func (r *Ring) Owner(id string) string {
	if len(r.points) == 0 {
		return ""
	}
	h := hash64(id)
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i] >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.owners[r.points[i]]
}

// Rendezvous is highest-random-weight hashing: the server with the highest
// hash(server, id) owns id. Adding a server moves about 1/(n+1).
type Rendezvous struct{ servers []string }

// NewRendezvous shards over servers.
func NewRendezvous(servers []string) *Rendezvous {
	return &Rendezvous{servers: append([]string(nil), servers...)}
}

// Owner implements Sharder.
func (r *Rendezvous) Owner(id string) string {
	best, owner := uint64(0), ""
	for _, s := range r.servers {
		if h := hash64(s + "\x00" + id); owner == "" || h > best {
			best, owner = h, s
		}
	}
	return owner
}

// AssignSite is site division: the one site p serves when proxies are
// partitioned over sites. It is p.Sites[0] when set, else the rendezvous
// owner of p.ID among sites ("" when both are empty).
func AssignSite(p Proxy, sites []string) string {
	if len(p.Sites) > 0 {
		return p.Sites[0]
	}
	return NewRendezvous(sites).Owner(p.ID)
}

// DivideSites partitions ps over sites with AssignSite.
func DivideSites(ps []Proxy, sites []string) map[string][]Proxy {
	out := map[string][]Proxy{}
	for _, p := range ps {
		s := AssignSite(p, sites)
		out[s] = append(out[s], p)
	}
	return out
}

// Shard groups ps by their owner under s.
func Shard(ps []Proxy, s Sharder) map[string][]Proxy {
	out := map[string][]Proxy{}
	for _, p := range ps {
		o := s.Owner(p.ID)
		out[o] = append(out[o], p)
	}
	return out
}

// Moved is the share of ids whose owner differs between before and after.
func Moved(ids []string, before, after Sharder) float64 {
	if len(ids) == 0 {
		return 0
	}
	n := 0
	for _, id := range ids {
		if before.Owner(id) != after.Owner(id) {
			n++
		}
	}
	return float64(n) / float64(len(ids))
}

// hash64 is FNV-1a with a splitmix64 finaliser, for well spread points.
func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
