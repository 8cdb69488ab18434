package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"crawlq/results/pgsink"
)

// Bounds of the item pages.
const (
	// itemTableRows is how many observations an item page lists, newest
	// first; the CSV has every one.
	itemTableRows = 500
	// itemChartSteps is how many of an item's newest steps the chart reads.
	itemChartSteps = 20000
	// searchLimit is how many items a search lists.
	searchLimit = 50
	// storeTimeout bounds one page's reads of the store.
	storeTimeout = 15 * time.Second
)

//go:embed templates/item.html
var itemTemplates embed.FS

var itemTmpl = template.Must(template.New("item.html").Funcs(template.FuncMap{
	"rub":     rubles,
	"stamp":   stamp,
	"itemURL": ItemURL,
	"stock":   stockText,
	"f1":      func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"deref":   func(b *bool) bool { return b != nil && *b },
	"short":   short,
}).ParseFS(itemTemplates, "templates/item.html"))

// ItemURL is the path of an item's page on the dashboard.
func ItemURL(site, id string) string {
	return "/item/" + url.PathEscape(site) + "/" + url.PathEscape(id)
}

// rubles shows kopecks as roubles with two decimals; "–" for unknown (0).
func rubles(k int64) string {
	if k == 0 {
		return "–"
	}
	return fmt.Sprintf("%d.%02d", k/100, k%100)
}

// shortCell is how many characters of a seller or schedule the
// observations table shows: it keeps 500 rows well under 100 KB.
const shortCell = 32

// short is s cut to shortCell characters, "…" marking the cut.
func short(s string) string {
	if r := []rune(s); len(r) > shortCell {
		return string(r[:shortCell-1]) + "…"
	}
	return s
}

func stockText(b *bool) string {
	switch {
	case b == nil:
		return "–"
	case *b:
		return "yes"
	}
	return "no"
}

// itemRoutes mounts the search and item pages when the dashboard has a
// results store.
func (s *Server) itemRoutes(mux *http.ServeMux) {
	if s.cfg.Store == nil {
		return
	}
	mux.HandleFunc("GET /items", s.serveSearch)
	mux.HandleFunc("GET /item/{site}/{id}", s.serveItem)
}

// searchData is the search page's input.
type searchData struct {
	Site, Q string
	Sites   []string
	Items   []pgsink.StoredItem
	Limit   int
	Err     string
}

// serveSearch lists the items whose id is q or whose title holds its
// words (?site=&q=).
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	d := searchData{Site: r.FormValue("site"), Q: r.FormValue("q"), Limit: searchLimit}
	sites, err := pgsink.Sites(ctx, s.cfg.Store)
	if err == nil {
		d.Sites = sites
		d.Items, err = pgsink.SearchItems(ctx, s.cfg.Store, d.Site, d.Q, searchLimit)
	}
	status := http.StatusOK
	if err != nil {
		s.log.Warn("web: search items", zap.Error(err))
		d.Err, status = pgsink.SchemaHint(err).Error(), http.StatusBadGateway
	}
	s.render(w, status, "search", d)
}

// itemData is the item page's input.
type itemData struct {
	Item   pgsink.StoredItem
	Chart  priceChart
	Recent []pgsink.PricePoint
	Total  int
	CSV    string
}

// serveItem answers an item's page, or with ?format=csv (or an id ending
// in .csv) its whole price history as CSV.
func (s *Server) serveItem(w http.ResponseWriter, r *http.Request) {
	site, id := r.PathValue("site"), r.PathValue("id")
	if base, ok := strings.CutSuffix(id, ".csv"); ok || r.FormValue("format") == "csv" {
		s.serveItemCSV(w, r, site, base)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	d, err := s.itemData(ctx, site, id)
	if err != nil {
		s.storeFail(w, err)
		return
	}
	s.render(w, http.StatusOK, "item", d)
}

func (s *Server) itemData(ctx context.Context, site, id string) (itemData, error) {
	it, err := pgsink.Item(ctx, s.cfg.Store, site, id)
	if err != nil {
		return itemData{}, err
	}
	d := itemData{Item: it, CSV: ItemURL(site, id) + ".csv"}
	steps, err := pgsink.PriceSteps(ctx, s.cfg.Store, site, id, itemChartSteps)
	if err != nil {
		return itemData{}, err
	}
	d.Chart = newPriceChart(steps)
	d.Recent, d.Total, err = pgsink.RecentPrices(ctx, s.cfg.Store, site, id, itemTableRows)
	return d, err
}

// serveItemCSV writes an item's every observation, oldest first.
func (s *Server) serveItemCSV(w http.ResponseWriter, r *http.Request, site, id string) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	if _, err := pgsink.Item(ctx, s.cfg.Store, site, id); err != nil {
		s.storeFail(w, err)
		return
	}
	ps, err := pgsink.Prices(ctx, s.cfg.Store, site, id)
	if err != nil {
		s.storeFail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", csvName(site, id)))
	if err := pgsink.WritePricesCSV(w, site, id, ps); err != nil {
		s.log.Debug("web: write item CSV", zap.Error(err))
	}
}

// csvName is the download's file name: site-id.csv, any character but
// letters, digits, '-' and '_' replaced.
func csvName(site, id string) string {
	safe := func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}
	return strings.Map(safe, site) + "-" + strings.Map(safe, id) + ".csv"
}

// storeFail answers 404 for an unknown item, 503 for a store without
// tables, 502 for any other failure of the store.
func (s *Server) storeFail(w http.ResponseWriter, err error) {
	err = pgsink.SchemaHint(err)
	switch {
	case errors.Is(err, pgsink.ErrNoItem):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, pgsink.ErrNoTables):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		s.log.Warn("web: read the results store", zap.Error(err))
		http.Error(w, "read the results store: "+err.Error(), http.StatusBadGateway)
	}
}

// render answers status and one of item.html's templates as an HTML page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := itemTmpl.ExecuteTemplate(w, name, data); err != nil {
		s.log.Warn("web: render "+name, zap.Error(err))
	}
}
