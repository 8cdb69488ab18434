package proxies

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Placement is which proxies' jobs a proxy serves: its class and sites.
type Placement struct {
	Class Class `json:"class"`
	// Sites limits the proxy to these sites; empty means every site.
	Sites []string `json:"sites,omitempty"`
}

func placementOf(p Proxy) Placement { return Placement{Class: p.Class, Sites: p.Sites} }

func (p Placement) equal(q Placement) bool {
	return p.Class == q.Class && slices.Equal(p.Sites, q.Sites)
}

// String is "datacenter on every site" or "residential on avito,ozon".
func (p Placement) String() string {
	if len(p.Sites) == 0 {
		return string(p.Class) + " on every site"
	}
	return string(p.Class) + " on " + strings.Join(p.Sites, ",")
}

// Change is an entry of the pool (a proxy, a modem or a gateway with its
// slots) that an import changes: its class or sites, its options, a
// gateway's slots.
type Change struct {
	// ID is the proxy's, or the gateway's.
	ID string `json:"id"`
	// Kind is "proxy", "modem" or "gateway".
	Kind string `json:"kind"`
	// Proxy is the masked address; At where the import read it.
	Proxy string    `json:"proxy"`
	At    string    `json:"at,omitempty"`
	From  Placement `json:"from"`
	To    Placement `json:"to"`
	// Options are the options that change, as "ttl 10m → 20m"; a change
	// link shows masked.
	Options []string `json:"options,omitempty"`
	// Added and Removed count a gateway's slots the import adds and
	// removes (its sessions changed).
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
}

// What says what changes: "from datacenter on every site to residential
// on every site, ttl 10m → 20m".
func (c Change) What() string {
	var parts []string
	if !c.From.equal(c.To) {
		parts = append(parts, "from "+c.From.String()+" to "+c.To.String())
	}
	return strings.Join(append(parts, c.Options...), ", ")
}

// optionChanges are the options of was that p changes, in the order of
// optionKeys: "ttl 10m → 20m", "exit (none) → probe"; a change link that
// prints the same masked says so instead of showing its key.
func optionChanges(was, p Proxy) []string {
	from, to := map[string]option{}, map[string]option{}
	for _, o := range options(was) {
		from[o.key] = o
	}
	for _, o := range options(p) {
		to[o.key] = o
	}
	var out []string
	for _, k := range optionKeys {
		a, inA := from[k]
		b, inB := to[k]
		switch {
		case a.value == b.value && inA == inB:
		case inA && inB && a.shown == b.shown:
			out = append(out, fmt.Sprintf("%s %s → another that prints the same (masked)", k, a.shown))
		default:
			out = append(out, fmt.Sprintf("%s %s → %s", k, shownOr(a, inA), shownOr(b, inB)))
		}
	}
	return out
}

func shownOr(o option, ok bool) string {
	if !ok {
		return "(none)"
	}
	return o.shown
}

// ErrWouldChange is wrapped by *ChangeError.
var ErrWouldChange = errors.New("import would change proxies already in the pool")

// ChangeError refuses an import that would change entries already in the
// pool (ImportOptions.Update allows it).
type ChangeError struct{ Changes []Change }

func (e *ChangeError) Error() string {
	return fmt.Sprintf("%s already in the pool would change: %s", changedTally(e.Changes), SummarizeChanges(e.Changes))
}

// Unwrap makes errors.Is(err, ErrWouldChange) true.
func (e *ChangeError) Unwrap() error { return ErrWouldChange }

// changedTally counts cs by kind.
func changedTally(cs []Change) Tally {
	var t Tally
	for _, c := range cs {
		t.add(c.Kind, 0)
	}
	return t
}

// SummarizeChanges says what changes, grouped and most common first: "20
// proxies from datacenter on every site to datacenter on amazon; gateway
// http://u-{session}:***@gw:1 (gw.txt:1): ttl 10m → 20m". A lone gateway
// or modem is named.
func SummarizeChanges(cs []Change) string {
	type group struct {
		kind, what string
		first      Change
		n          int
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, c := range cs {
		key := c.Kind + "\t" + c.What()
		if g := byKey[key]; g != nil {
			g.n++
			continue
		}
		byKey[key] = &group{kind: c.Kind, what: c.What(), first: c, n: 1}
		groups = append(groups, byKey[key])
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].n > groups[j].n })
	out := make([]string, len(groups))
	for i, g := range groups {
		var t Tally
		for range g.n {
			t.add(g.kind, 0)
		}
		who := t.String()
		if g.n == 1 && g.kind != "proxy" {
			who = g.kind + " " + g.first.Proxy
			if g.first.At != "" {
				who += " (" + g.first.At + ")"
			}
		}
		sep := ": "
		if strings.HasPrefix(g.what, "from ") {
			sep = " "
		}
		out[i] = who + sep + g.what
	}
	return strings.Join(out, "; ")
}
