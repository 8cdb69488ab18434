package wildberries

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"crawlq/tasks/site"
)

// UpstreamsPath is where the basket CDN publishes its upstream map, the
// vol ranges each basket host serves: https://cdn.wbbasket.ru/api/v3/upstreams
// (public clients of 2026 read recommend. or origin.mediabasket_route_map
// [].hosts[] {vol_range_from, vol_range_to, host}: krein15/
// marketplace-parser tests/test_wildberries.py @2d93244, docs/sites.md).
const UpstreamsPath = "/api/v3/upstreams"

// upstreamsTTL is how long the cluster keeps the map it read (or that
// none is published) before a card job reads it again.
const upstreamsTTL = time.Hour

// Memory fields of the map: its routes ("FROM-TO:N,…"; "" when the CDN
// published none) and when they were read (unix seconds).
const (
	routesField   = "upstreams"
	routesAtField = "upstreams_at"
)

// Route is one range of the upstream map: vols From to To are on basket
// host N.
type Route struct {
	From, To int64
	N        int
}

// Routes is the upstream map: the host of a vol where the site publishes
// it.
type Routes []Route

// Host is the basket host number the map gives vol; ok is false when no
// range holds it (a host newer than the map, or no map).
func (rs Routes) Host(vol int64) (int, bool) {
	for _, r := range rs {
		if vol >= r.From && vol <= r.To {
			return r.N, true
		}
	}
	return 0, false
}

// below is the highest host the map gives a vol below vol, 0 if none:
// where the probe of a vol newer than the map starts.
func (rs Routes) below(vol int64) int {
	n := 0
	for _, r := range rs {
		if r.To < vol {
			n = max(n, r.N)
		}
	}
	return n
}

// upstreamsURL is the upstream map's URL next to pattern's basket hosts:
// basket-NN. becomes cdn. (https://cdn.wbbasket.ru/api/v3/upstreams).
func upstreamsURL(pattern string) string {
	return strings.Replace(pattern, basketNN, "cdn.", 1) + UpstreamsPath
}

// upstreams is the map the cluster keeps, read again through read from
// the CDN when older than upstreamsTTL (none kept: read now). A map the
// CDN does not publish (404), or one without a basket host, is kept as
// empty, and the probe goes by the table. An answer that is neither
// stops the job with it.
func upstreams(ctx context.Context, pattern string, mem site.Memory, read site.Read) (Routes, error) {
	now := time.Now()
	if rs, ok, err := keptRoutes(ctx, mem, now); ok || err != nil {
		return rs, err
	}
	body, found, err := read(ctx, upstreamsURL(pattern))
	if err != nil {
		return nil, fmt.Errorf("read the basket upstream map: %w", err)
	}
	var rs Routes
	if found {
		rs = DecodeUpstreams(body)
	}
	if err := mem.Remember(ctx, routesField, rs.String()); err != nil {
		return rs, fmt.Errorf("remember the basket upstream map: %w", err)
	}
	return rs, mem.Remember(ctx, routesAtField, strconv.FormatInt(now.Unix(), 10))
}

// keptRoutes is the map mem keeps, if read within upstreamsTTL.
func keptRoutes(ctx context.Context, mem site.Memory, now time.Time) (Routes, bool, error) {
	at, ok, err := mem.Recall(ctx, routesAtField)
	if err != nil || !ok {
		return nil, false, err
	}
	sec, perr := strconv.ParseInt(at, 10, 64)
	if perr != nil || now.Sub(time.Unix(sec, 0)) >= upstreamsTTL {
		return nil, false, nil
	}
	v, _, err := mem.Recall(ctx, routesField)
	if err != nil {
		return nil, false, err
	}
	rs, perr := parseRoutes(v)
	return rs, perr == nil, nil
}

// upstreamMap is the upstream map's JSON: the same route map under
// recommend and origin.
type upstreamMap struct {
	Recommend routeMaps `json:"recommend"`
	Origin    routeMaps `json:"origin"`
}

type routeMaps struct {
	Media []struct {
		Method string `json:"method"`
		Hosts  []struct {
			From int64  `json:"vol_range_from"`
			To   int64  `json:"vol_range_to"`
			Host string `json:"host"`
		} `json:"hosts"`
	} `json:"mediabasket_route_map"`
}

var basketHostRe = regexp.MustCompile(`^basket-([0-9]{1,3})\.`)

// DecodeUpstreams reads the basket routes of an upstream map: those of
// recommend, else of origin; ranges of a method other than "range" and
// hosts that are not basket-NN are left out. Not a map: no routes.
func DecodeUpstreams(body []byte) Routes {
	var m upstreamMap
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	if rs := m.Recommend.routes(); len(rs) > 0 {
		return rs
	}
	return m.Origin.routes()
}

func (ms routeMaps) routes() Routes {
	var rs Routes
	for _, m := range ms.Media {
		if m.Method != "" && m.Method != "range" {
			continue
		}
		for _, h := range m.Hosts {
			sub := basketHostRe.FindStringSubmatch(h.Host)
			if sub == nil || h.To < h.From {
				continue
			}
			n, _ := strconv.Atoi(sub[1])
			rs = append(rs, Route{From: h.From, To: h.To, N: n})
		}
	}
	slices.SortFunc(rs, func(a, b Route) int { return int(a.From - b.From) })
	return rs
}

// String is the map as memory keeps it: "FROM-TO:N,…".
func (rs Routes) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d-%d:%d", r.From, r.To, r.N)
	}
	return strings.Join(parts, ",")
}

// parseRoutes reads Routes.String.
func parseRoutes(s string) (Routes, error) {
	var rs Routes
	for _, p := range strings.Split(s, ",") {
		if p == "" {
			continue
		}
		var r Route
		if _, err := fmt.Sscanf(p, "%d-%d:%d", &r.From, &r.To, &r.N); err != nil {
			return nil, fmt.Errorf("basket route %q: %w", p, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}
