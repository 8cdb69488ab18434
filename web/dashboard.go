package web

import (
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"time"

	"go.uber.org/zap"

	"crawlq/proxies"
)

//go:embed templates/dashboard.html
var templates embed.FS

var dashboardTmpl = template.Must(template.New("dashboard.html").Funcs(template.FuncMap{
	"percent": percent,
	"ms":      roundLatency,
	"ago":     func(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() },
	"sites":   sortedKeys[proxies.SiteStats],
	"weights": queueWeights,
}).ParseFS(templates, "templates/dashboard.html"))

// roundLatency shows a latency to the millisecond, or to the microsecond
// below one (loopback and LAN answers).
func roundLatency(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// Dashboard is what the pool page shows and /api/pool returns.
type Dashboard struct {
	// Status holds the queues, the pool per site and the live servers.
	Status *Status `json:"status"`
	// Proxies has one row per proxy and site, sorted by proxy then site.
	Proxies []ProxyRow `json:"proxies"`
	// Holders counts leases per holder (server/worker), most first.
	Holders []HolderCount `json:"requests_per_server"`
	// SuccessRate is the pool-wide success rate over the last minutes.
	SuccessRate []RatePoint `json:"success_rate"`
}

// ProxyRow is one proxy's state and counters for one site. Proxy is the
// masked spec (scheme://user:***@host:port).
type ProxyRow struct {
	ID       string        `json:"id"`
	Proxy    string        `json:"proxy"`
	Class    proxies.Class `json:"class"`
	Site     string        `json:"site"`
	State    string        `json:"state"`
	OK       int64         `json:"ok"`
	Failed   int64         `json:"failed"`
	Banned   int64         `json:"banned"`
	Requests int64         `json:"requests"`
	// SuccessRate is OK / Requests, 0 without requests.
	SuccessRate float64       `json:"success_rate"`
	EWMALatency time.Duration `json:"ewma_latency"`
	LastBan     string        `json:"last_ban_reason,omitempty"`
	Holder      string        `json:"holder,omitempty"`
}

// HolderCount is how many leases one server/worker took.
type HolderCount struct {
	Holder string `json:"holder"`
	Leases int64  `json:"leases"`
}

// pageData is the template's input.
type pageData struct {
	*Dashboard
	Refresh    int
	Chart      chart
	Monitoring string
	ReadOnly   bool
}

// dashboard collects everything the page shows.
func (s *Server) dashboard(r *http.Request) (*Dashboard, error) {
	st, ps, err := collect(r.Context(), s.insp, s.cfg.Broker)
	if err != nil {
		return nil, err
	}
	return &Dashboard{Status: st, Proxies: proxyRows(ps.Proxies),
		Holders: holderCounts(ps.Proxies), SuccessRate: s.hist.rates()}, nil
}

func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request) {
	d, err := s.dashboard(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	data := pageData{Dashboard: d, Refresh: int(s.cfg.Refresh / time.Second),
		Chart: newChart(d.SuccessRate), Monitoring: MonitoringPath, ReadOnly: s.cfg.ReadOnly}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := dashboardTmpl.Execute(w, data); err != nil {
		s.log.Warn("web: render dashboard", zap.Error(err))
	}
}

func (s *Server) servePoolJSON(w http.ResponseWriter, r *http.Request) {
	d, err := s.dashboard(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		s.log.Debug("web: write /api/pool", zap.Error(err))
	}
}

// fail answers 502: the dashboard works but Redis or the broker did not.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.log.Warn("web: collect", zap.Error(err))
	http.Error(w, "collect cluster state: "+err.Error(), http.StatusBadGateway)
}

// proxyRows flattens per-proxy, per-site stats into table rows.
func proxyRows(ps []proxies.ProxyStats) []ProxyRow {
	rows := []ProxyRow{}
	for _, p := range ps {
		for _, site := range sortedKeys(p.Sites) {
			rows = append(rows, proxyRow(p, site, p.Sites[site]))
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows
}

func proxyRow(p proxies.ProxyStats, site string, st proxies.ProxySiteStats) ProxyRow {
	return ProxyRow{
		ID: p.ID, Proxy: maskSpec(p.Masked), Class: p.Class, Site: site, State: st.State,
		OK: st.OK, Failed: st.Failed, Banned: st.Banned, Requests: st.OK + st.Failed + st.Banned,
		SuccessRate: successRate(st.OK, st.Failed, st.Banned), EWMALatency: st.EWMALatency,
		LastBan: st.LastBan, Holder: st.Holder,
	}
}

func successRate(ok, failed, banned int64) float64 {
	n := ok + failed + banned
	if n == 0 {
		return 0
	}
	return float64(ok) / float64(n)
}

// holderCounts sums leases per holder over every proxy and site.
func holderCounts(ps []proxies.ProxyStats) []HolderCount {
	sum := map[string]int64{}
	for _, p := range ps {
		for _, st := range p.Sites {
			for h, n := range st.LeasesByHolder {
				sum[h] += n
			}
		}
	}
	out := make([]HolderCount, 0, len(sum))
	for h, n := range sum {
		out = append(out, HolderCount{Holder: h, Leases: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Leases != out[j].Leases {
			return out[i].Leases > out[j].Leases
		}
		return out[i].Holder < out[j].Holder
	})
	return out
}

// maskSpec makes sure a proxy spec shows no password, whatever the broker
// sent: a URL with a password gets user:***; anything that is not a
// scheme://host URL is hidden.
func maskSpec(spec string) string {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "<unparseable proxy spec>"
	}
	if u.User == nil {
		return spec
	}
	if _, ok := u.User.Password(); !ok {
		return spec
	}
	u.User = url.UserPassword(u.User.Username(), "***")
	s, _ := url.PathUnescape(u.String())
	return s
}
