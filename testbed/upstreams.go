package testbed

import (
	"net/http"
)

// UpstreamsHost is the host of the basket CDN's upstream map,
// Wildberries' cdn.wbbasket.ru; UpstreamsPath its path. The farm
// resolves the host to the loopback and the Wildberries site serves it.
const (
	UpstreamsHost = "cdn." + BasketDomain
	UpstreamsPath = "/api/v3/upstreams"
)

// UpstreamsRule makes the basket CDN publish its upstream map, the vol
// ranges of each basket host, as Wildberries publishes it at
// cdn.wbbasket.ru/api/v3/upstreams (public clients read recommend. or
// origin.mediabasket_route_map[].hosts[] {vol_range_from, vol_range_to,
// host}: krein15/marketplace-parser tests/test_wildberries.py @2d93244;
// no capture of the real map was found, so this answer is built from
// that code). It gives the testbed's real layout (BasketHostOf: the
// moved vol on its own host) up to host Upto; hosts past Upto are newer
// than the map, found only by probing.
type UpstreamsRule struct {
	Upto int `json:"upto"`
}

// upstreamRoute is one host of the map.
type upstreamRoute struct {
	From int64  `json:"vol_range_from"`
	To   int64  `json:"vol_range_to"`
	Host string `json:"host"`
}

// upstreamMap is the map's JSON.
type upstreamMap struct {
	Recommend upstreamRouteMaps `json:"recommend"`
	Origin    upstreamRouteMaps `json:"origin"`
}

type upstreamRouteMaps struct {
	Media []upstreamRouteMap `json:"mediabasket_route_map"`
}

type upstreamRouteMap struct {
	Method string          `json:"method"`
	Hosts  []upstreamRoute `json:"hosts"`
}

// upstreamMap answers the upstream map, 404 when the rule publishes none.
func (wb *wildberries) upstreamMap(w http.ResponseWriter, r *http.Request) {
	if wb.upstreams == nil {
		http.NotFound(w, r)
		return
	}
	m := upstreamRouteMaps{Media: []upstreamRouteMap{{Method: "range", Hosts: upstreamRoutes(wb.upstreams.Upto)}}}
	writeJSON(w, upstreamMap{Recommend: m, Origin: m})
}

// upstreamRoutes are the vol ranges of hosts 1 to upto, by BasketHostOf:
// a run of vols on one host is one range.
func upstreamRoutes(upto int) []upstreamRoute {
	var out []upstreamRoute
	for vol := int64(0); ; vol++ {
		n := BasketHostOf(vol * 100000)
		if n > upto {
			return out
		}
		if last := len(out) - 1; last >= 0 && out[last].Host == BasketHost(n) && out[last].To == vol-1 {
			out[last].To = vol
			continue
		}
		out = append(out, upstreamRoute{From: vol, To: vol, Host: BasketHost(n)})
	}
}
