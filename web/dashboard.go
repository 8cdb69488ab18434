package web

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"crawlq/proxies"
)

//go:embed templates/dashboard.html
var templates embed.FS

var dashboardTmpl = template.Must(template.New("dashboard.html").Funcs(template.FuncMap{
	"percent":   percent,
	"ms":        roundLatency,
	"ago":       func(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() },
	"weights":   queueWeights,
	"clock":     clock,
	"val":       func(v map[string]string, parts ...any) string { return v[joinKey(parts)] },
	"key":       func(parts ...any) string { return joinKey(parts) },
	"fields":    strings.Fields,
	"modemLine": ModemLine,
	"limitRows": limitRows,
}).ParseFS(templates, "templates/dashboard.html"))

// joinKey joins the parts of a data-k key with "/".
func joinKey(parts []any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, "/")
}

// roundLatency shows a latency to the millisecond, or to the microsecond
// below one (loopback and LAN answers).
func roundLatency(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// ProxyRow is one proxy's state and counters for one site. Proxy is the
// masked spec (scheme://user:***@host:port). A proxy that no site lists
// yet has one row with an empty Site.
type ProxyRow struct {
	ID    string        `json:"id"`
	Proxy string        `json:"proxy"`
	Class proxies.Class `json:"class"`
	// Allowed are the sites the proxy may serve, "*" for every site.
	Allowed  string `json:"sites"`
	Site     string `json:"site,omitempty"`
	State    string `json:"state,omitempty"`
	OK       int64  `json:"ok"`
	Failed   int64  `json:"failed"`
	Banned   int64  `json:"banned"`
	Requests int64  `json:"requests"`
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

// PoolPage is one page of the proxy table: /api/pool's answer.
type PoolPage struct {
	// At is when the pool was read (the table's snapshot).
	At    time.Time `json:"at"`
	Query Query     `json:"query"`
	// Total is how many rows match the query; Pages how many pages they fill.
	Total   int        `json:"total"`
	Pages   int        `json:"pages"`
	Proxies []ProxyRow `json:"proxies"`
}

// Section is an extra part of the pool page, below the built-in ones
// (e.g. the latest changes of a results store).
type Section struct {
	// ID is the section's HTML id; Title its heading.
	ID, Title string
	// Render returns the section's body, or an error shown in its place.
	Render func(ctx context.Context) (template.HTML, error)
}

// pageData is the template's input.
type pageData struct {
	*Summary
	Refresh    int
	Chart      chart
	Sites      []siteView
	Table      *PoolPage
	TableNote  string
	Prev, Next string
	SiteNames  []string
	Monitoring string
	ReadOnly   bool
	Sections   []renderedSection
	// ItemSearch shows the item search form (Config.Store is set).
	ItemSearch bool
}

// siteView is one site's block: totals, per-class rows and small charts.
type siteView struct {
	Name      string
	Stats     proxies.SiteStats
	Classes   []ClassCounters
	Success   chart
	Bans      chart
	P90       chart
	Exhausted string
}

type renderedSection struct {
	ID, Title string
	HTML      template.HTML
	Err       string
}

// viewWait is how long a page, API call or scrape waits for the first
// read of the pool before it answers without one; once a view exists
// nobody waits (a stale one is replaced in the background).
const viewWait = 2 * time.Second

func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request) {
	q, err := ParseQuery(r.URL.Query())
	if err != nil {
		http.Error(w, "bad query: "+err.Error(), http.StatusBadRequest)
		return
	}
	v, _ := s.views.get(r.Context(), viewWait)
	sum, err := s.summary(r.Context(), v)
	if err != nil {
		s.fail(w, err)
		return
	}
	data := s.pageData(r.Context(), sum, v, q)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := dashboardTmpl.Execute(w, data); err != nil {
		s.log.Warn("web: render dashboard", zap.Error(err))
	}
}

func (s *Server) pageData(ctx context.Context, sum *Summary, v *poolView, q Query) pageData {
	d := pageData{Summary: sum, Refresh: int(s.cfg.Refresh / time.Second), Chart: newChart(s.hist.rates("")),
		Monitoring: MonitoringPath, ReadOnly: s.cfg.ReadOnly, ItemSearch: s.cfg.Store != nil}
	for _, name := range sortedKeys(sum.Status.Pool.Sites) {
		d.Sites = append(d.Sites, s.siteView(name, sum))
		d.SiteNames = append(d.SiteNames, name)
	}
	if v == nil {
		d.TableNote = "The pool is being read for the first time; reload in a few seconds."
	} else {
		d.Table = poolPage(v, q)
		d.Prev, d.Next = pageLinks(d.Table)
	}
	d.Sections = s.renderSections(ctx)
	return d
}

func (s *Server) siteView(name string, sum *Summary) siteView {
	st := sum.Status.Pool.Sites[name]
	sv := siteView{Name: name, Stats: st}
	for _, c := range sum.Classes {
		if c.Site == name {
			sv.Classes = append(sv.Classes, c)
		}
	}
	pts := s.hist.rates(name)
	sv.Success, sv.Bans, sv.P90 = successSpark(pts), bansSpark(pts), latencySpark(pts)
	for i, c := range st.Exhausted {
		if i > 0 {
			sv.Exhausted += " "
		}
		sv.Exhausted += string(c)
	}
	return sv
}

func (s *Server) renderSections(ctx context.Context) []renderedSection {
	out := make([]renderedSection, 0, len(s.cfg.Sections))
	for _, sec := range s.cfg.Sections {
		out = append(out, renderSection(ctx, sec))
	}
	return out
}

func renderSection(ctx context.Context, sec Section) renderedSection {
	h, err := sec.Render(ctx)
	rs := renderedSection{ID: sec.ID, Title: sec.Title, HTML: h}
	if err != nil {
		rs.Err = err.Error()
	}
	return rs
}

// serveSection answers one section's body (the HTML the page shows under
// its heading), for the page to refresh it in place.
func (s *Server) serveSection(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, sec := range s.cfg.Sections {
		if sec.ID != id {
			continue
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := dashboardTmpl.ExecuteTemplate(w, "section", renderSection(r.Context(), sec)); err != nil {
			s.log.Debug("web: write /api/section", zap.String("section", id), zap.Error(err))
		}
		return
	}
	http.Error(w, "no section "+strconv.Quote(id), http.StatusNotFound)
}

// poolPage is q's page of v's rows.
func poolPage(v *poolView, q Query) *PoolPage {
	rows, total := v.page(q, PageSize)
	return &PoolPage{At: v.At, Query: q, Total: total, Pages: (total + PageSize - 1) / PageSize, Proxies: rows}
}

// pageLinks are the query strings of the previous and next pages ("" for none).
func pageLinks(p *PoolPage) (prev, next string) {
	if p.Query.Page > 1 {
		prev = "?" + p.Query.Values(p.Query.Page-1).Encode()
	}
	if p.Query.Page < p.Pages {
		next = "?" + p.Query.Values(p.Query.Page+1).Encode()
	}
	return prev, next
}

// servePoolJSON answers one page of the proxy table, or with ?all=1 every
// matching row, streamed.
func (s *Server) servePoolJSON(w http.ResponseWriter, r *http.Request) {
	q, err := ParseQuery(r.URL.Query())
	if err != nil {
		http.Error(w, "bad query: "+err.Error(), http.StatusBadRequest)
		return
	}
	v, err := s.views.get(r.Context(), viewWait)
	if v == nil {
		if err == nil {
			http.Error(w, "the pool is being read for the first time; try again in a few seconds", http.StatusServiceUnavailable)
			return
		}
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if all := r.URL.Query().Get("all"); all == "1" || all == "true" {
		s.streamAll(w, v, q)
		return
	}
	if err := json.NewEncoder(w).Encode(poolPage(v, q)); err != nil {
		s.log.Debug("web: write /api/pool", zap.Error(err))
	}
}

// streamAll writes every row matching q as one JSON object,
// {"at":…,"query":…,"proxies":[…],"total":N}, encoding and flushing row by
// row from the view: the pool is never copied.
func (s *Server) streamAll(w http.ResponseWriter, v *poolView, q Query) {
	head, _ := json.Marshal(struct {
		At    time.Time `json:"at"`
		Query Query     `json:"query"`
	}{v.At, q})
	fl, _ := w.(http.Flusher)
	bw := newFlushWriter(w, fl)
	bw.write(head[:len(head)-1])
	bw.write([]byte(`,"proxies":[`))
	n := 0
	enc := json.NewEncoder(bw)
	v.each(q, func(r *ProxyRow) bool {
		if n > 0 {
			bw.write([]byte{','})
		}
		n++
		return enc.Encode(r) == nil && bw.err == nil
	})
	bw.write([]byte(`],"total":` + strconv.Itoa(n) + "}\n"))
	bw.flush()
	if bw.err != nil {
		s.log.Debug("web: stream /api/pool", zap.Error(bw.err))
	}
}

func (s *Server) serveSummaryJSON(w http.ResponseWriter, r *http.Request) {
	v, _ := s.views.get(r.Context(), 0)
	sum, err := s.summary(r.Context(), v)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(sum); err != nil {
		s.log.Debug("web: write /api/summary", zap.Error(err))
	}
}

// fail answers 502: the dashboard works but Redis or the broker did not.
func (s *Server) fail(w http.ResponseWriter, err error) {
	s.log.Warn("web: collect", zap.Error(err))
	http.Error(w, "collect cluster state: "+err.Error(), http.StatusBadGateway)
}

// proxyRow is one table row; masked is mask.URL(p.Masked), computed once
// per proxy.
func proxyRow(p proxies.ProxyStats, masked, site string, st proxies.ProxySiteStats) ProxyRow {
	return ProxyRow{
		ID: p.ID, Proxy: masked, Class: p.Class, Site: site, State: st.State,
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
