package proxies

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"crawlq/internal/mask"
)

// Entry is one line of a proxy list as the pool holds it: a proxy, or a
// gateway with all its slots.
type Entry struct {
	// ID is the proxy's, or the gateway's (its slots' common ID).
	ID string
	// Proxy is the proxy, or the gateway's lowest slot.
	Proxy Proxy
	// Slots are a gateway's slot IDs by slot; nil for a proxy.
	Slots []string
}

// Kind is "gateway", "modem" or "proxy".
func (e Entry) Kind() string { return kindOf(e.Proxy) }

func kindOf(p Proxy) string {
	switch {
	case p.Gateway != nil:
		return "gateway"
	case p.Modem != nil:
		return "modem"
	}
	return "proxy"
}

// GatewayID is the ID a gateway's slots share (a slot's ID is
// GatewayID-<slot>); "" for a proxy that is no gateway's slot.
func (p Proxy) GatewayID() string {
	if p.Gateway == nil {
		return ""
	}
	return strings.TrimSuffix(p.ID, "-"+strconv.Itoa(p.Gateway.Slot))
}

// Entries groups ps into entries, in the order of each entry's first
// proxy in ps, a gateway's slots by slot.
func Entries(ps []Proxy) []Entry {
	var out []Entry
	at := map[string]int{}
	for _, p := range ps {
		id := p.GatewayID()
		if id == "" {
			out = append(out, Entry{ID: p.ID, Proxy: p})
			continue
		}
		i, ok := at[id]
		if !ok {
			i, at[id] = len(out), len(out)
			out = append(out, Entry{ID: id, Proxy: p})
		}
		out[i].Slots = append(out[i].Slots, p.ID)
		if p.Gateway.Slot < out[i].Proxy.Gateway.Slot {
			out[i].Proxy = p
		}
	}
	for _, e := range out {
		slices.SortFunc(e.Slots, func(a, b string) int { return slotOf(a) - slotOf(b) })
	}
	return out
}

// slotOf is the slot number at the end of a slot's ID.
func slotOf(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
	return n
}

// Tally counts a list's entries by kind: what an import or a removal
// names.
type Tally struct {
	Proxies  int `json:"proxies"`
	Modems   int `json:"modems"`
	Gateways int `json:"gateways"`
	// Sessions counts the gateways' slots.
	Sessions int `json:"sessions"`
}

// tallyOf counts es.
func tallyOf(es []Entry) Tally {
	var t Tally
	for _, e := range es {
		t.add(e.Kind(), len(e.Slots))
	}
	return t
}

func (t *Tally) add(kind string, slots int) {
	switch kind {
	case "gateway":
		t.Gateways++
		t.Sessions += slots
	case "modem":
		t.Modems++
	default:
		t.Proxies++
	}
}

// Entries is how many entries t counts.
func (t Tally) Entries() int { return t.Proxies + t.Modems + t.Gateways }

// String is "1 gateway (20 sessions), 2 modems and 3 proxies" ("no
// proxy" for none); a gateway's sessions are left out when not counted.
func (t Tally) String() string {
	var parts []string
	if t.Gateways > 0 {
		s := plural(t.Gateways, "gateway", "gateways")
		if t.Sessions > 0 {
			s += " (" + plural(t.Sessions, "session", "sessions") + ")"
		}
		parts = append(parts, s)
	}
	if t.Modems > 0 {
		parts = append(parts, plural(t.Modems, "modem", "modems"))
	}
	if t.Proxies > 0 {
		parts = append(parts, plural(t.Proxies, "proxy", "proxies"))
	}
	switch len(parts) {
	case 0:
		return "no proxy"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// plural is "1 proxy" or "N proxies".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// option is one option of a proxy as a list line writes it: its key, its
// value and the value safe to print.
type option struct{ key, value, shown string }

// options are p's options in the order of optionKeys: a gateway's
// sessions, ttl and idle (or rotating), the exit, a modem's change link
// and times.
func options(p Proxy) []option {
	var out []option
	add := func(key, value, shown string) { out = append(out, option{key, value, shown}) }
	if g := p.Gateway; g != nil {
		add("sessions", strconv.Itoa(g.Sessions), strconv.Itoa(g.Sessions))
		if g.Rotating {
			add("rotating", "true", "true")
		} else {
			add("ttl", optionDuration(g.TTL), optionDuration(g.TTL))
			add("idle", optionDuration(g.Idle), optionDuration(g.Idle))
		}
	}
	if e := p.Exit; e != nil {
		add("exit", exitOption(e), exitOption(e))
		if e.ProbeURL != "" {
			out[len(out)-1].shown = "probe:" + mask.URL(e.ProbeURL)
		}
	}
	if m := p.Modem; m != nil {
		add("change", m.ChangeURL, m.Masked())
		add("change_method", m.Method, m.Method)
		add("change_every", optionDuration(m.Every), optionDuration(m.Every))
		add("change_settle", optionDuration(m.Settle), optionDuration(m.Settle))
		if m.Timeout > 0 {
			add("change_timeout", optionDuration(m.Timeout), optionDuration(m.Timeout))
		}
	}
	return out
}

// Options are p's options as a list line writes them (sessions=20
// ttl=10m idle=1m exit=probe; change=… with its key masked), defaults
// included; none for a plain proxy.
func (p Proxy) Options() []string {
	var out []string
	for _, o := range options(p) {
		if o.key == "rotating" {
			out = append(out, "rotating")
			continue
		}
		out = append(out, o.key+"="+o.shown)
	}
	return out
}

// exitOption is an exit source as its option's value.
func exitOption(e *ExitSource) string {
	switch {
	case e.Header != "":
		return "header:" + e.Header
	case e.ProbeURL != "":
		return "probe:" + e.ProbeURL
	}
	return "probe"
}

// optionDuration is d as a line would give it: 10m, not 10m0s.
func optionDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
