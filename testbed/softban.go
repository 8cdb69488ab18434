package testbed

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Meaning is what a site meant by one answer, as the request log records
// it: the truth a crawler's verdicts are measured against.
type Meaning string

// Meanings in the request log (Entry.Meant).
const (
	// MeantItems: a listing or product answer with the items asked for.
	MeantItems Meaning = "items"
	// MeantEmpty: the true answer is empty: a query that matches nothing,
	// an id the catalog lacks, or a page past the last one.
	MeantEmpty Meaning = "empty"
	// MeantBanned: a soft ban: the IP is banned, and the site answered
	// with its empty shape although the true answer had items.
	MeantBanned Meaning = "banned"
)

// VerdictSoftBanned: the IP is soft-banned; the site answered 200 with
// its no-results shape in place of the items (Entry.Meant is
// MeantBanned).
const VerdictSoftBanned Verdict = "soft_banned"

// SoftBan makes a site soft-ban IPs, as the real sites do: a soft-banned
// IP gets status 200 and the site's no-results answer (Wildberries'
// search its query-resolution object without products, its card API
// an empty card list, Ozon's empty search
// state, on its HTML page and in its page API's answer, Avito's "Ничего
// не найдено" page) wherever the true answer has items; one request cannot tell it from a query that matches nothing.
// Product pages of Ozon and Avito have no such shape and are served as
// usual. Bans start by themselves (Every) or by Testbed.SoftBan.
type SoftBan struct {
	// Every: every Every-th eligible request starts a soft ban of its IP.
	// A request is eligible when its IP is not banned on the site, its
	// true answer has items and no ban started within Gap. 0: bans start
	// only by Testbed.SoftBan.
	Every int `json:"every"`
	// Gap is the least time between a soft-banned answer that hid items
	// and the start of the next automatic ban, so that a crawler asking a
	// second IP right after a soft-banned answer meets one banned IP at a
	// time. Default one second. Besides, a request for what a soft-banned
	// answer hid in the last minute (the same path and query: a second
	// opinion, however long it took to come) never starts a ban itself.
	Gap time.Duration `json:"gap"`
	// For is how long a ban lasts; 0: the rest of the run.
	For time.Duration `json:"for"`
	// Max caps the automatic bans of the run; 0: no cap.
	Max int `json:"max"`
	// Pair makes each automatic ban soft-ban a second IP at the same
	// moment: the next other IP that asks for what the first ban hid (a
	// crawler's second opinion) is banned by that request, so two
	// soft-banned IPs agree on the empty shape (issue 36.8). A pair's
	// second ban does not count toward Max.
	Pair bool `json:"pair,omitempty"`
}

// softBans is one site's soft-ban state. Safe for concurrent use.
type softBans struct {
	rule  SoftBan
	mu    sync.Mutex
	until map[string]time.Time // IP -> end of its ban (zero: the run)
	// hidden: path and query -> when a soft-banned answer last hid its
	// items (secondOpinionFor); entries older than that are dropped once
	// per secondOpinionFor (pruned: the last time), so it holds about
	// two minutes of them, not the run's.
	hidden map[string]time.Time
	// pair: path and query -> the IP whose automatic ban hid it, while
	// the ban's pair (Pair) has not been banned yet.
	pair     map[string]string
	pruned   time.Time
	eligible int
	started  int
	last     time.Time
}

func newSoftBans(rule *SoftBan) *softBans {
	sb := &softBans{until: map[string]time.Time{}, hidden: map[string]time.Time{}, pair: map[string]string{}}
	if rule != nil {
		sb.rule = *rule
	}
	if sb.rule.Gap <= 0 {
		sb.rule.Gap = time.Second
	}
	return sb
}

// secondOpinionFor is how long a request for what a soft-banned answer
// hid counts as its second opinion, which never starts a ban.
const secondOpinionFor = time.Minute

// judge says whether ip is soft-banned for a request of path (with its
// query) at now whose true answer is m, starting a ban when the rule says
// so.
func (sb *softBans) judge(ip, path string, m Meaning, now time.Time) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.bannedLocked(ip, now) {
		if m == MeantItems {
			if first, ok := sb.pair[path]; ok && first != ip {
				delete(sb.pair, path) // a second banned IP already: the pair is formed
			}
			sb.last = now // no new ban while a banned IP's answers hide items
			sb.hideLocked(path, now)
		}
		return true
	}
	if first, ok := sb.pair[path]; ok && first != ip && m == MeantItems && now.Sub(sb.hidden[path]) < secondOpinionFor {
		delete(sb.pair, path) // the pair's second IP: banned by its second opinion
		sb.until[ip] = now.Add(sb.rule.For)
		if sb.rule.For <= 0 {
			sb.until[ip] = time.Time{}
		}
		sb.last = now
		sb.hideLocked(path, now)
		return true
	}
	if at, ok := sb.hidden[path]; ok && now.Sub(at) < secondOpinionFor {
		return false
	}
	if m != MeantItems || sb.rule.Every <= 0 || (sb.rule.Max > 0 && sb.started >= sb.rule.Max) ||
		(!sb.last.IsZero() && now.Sub(sb.last) < sb.rule.Gap) {
		return false
	}
	sb.eligible++
	if sb.eligible%sb.rule.Every != 0 {
		return false
	}
	sb.banLocked(ip, now, sb.rule.For)
	sb.hideLocked(path, now)
	if sb.rule.Pair {
		sb.pair[path] = ip
	}
	return true
}

// hideLocked notes that a soft-banned answer hid path's items at now,
// and drops the notes past secondOpinionFor once per secondOpinionFor.
func (sb *softBans) hideLocked(path string, now time.Time) {
	if now.Sub(sb.pruned) >= secondOpinionFor {
		for p, at := range sb.hidden {
			if now.Sub(at) >= secondOpinionFor {
				delete(sb.hidden, p)
			}
		}
		sb.pruned = now
	}
	sb.hidden[path] = now
}

// ban soft-bans ip from now for d (0: the rest of the run).
func (sb *softBans) ban(ip string, now time.Time, d time.Duration) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.banLocked(ip, now, d)
}

func (sb *softBans) banLocked(ip string, now time.Time, d time.Duration) {
	var end time.Time
	if d > 0 {
		end = now.Add(d)
	}
	sb.until[ip] = end
	sb.started++
	sb.last = now
}

func (sb *softBans) bannedLocked(ip string, now time.Time) bool {
	end, ok := sb.until[ip]
	return ok && (end.IsZero() || now.Before(end))
}

// banned reports whether ip is soft-banned at now.
func (sb *softBans) banned(ip string, now time.Time) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.bannedLocked(ip, now)
}

// ips lists every IP ever soft-banned.
func (sb *softBans) ips() []string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	out := make([]string, 0, len(sb.until))
	for ip := range sb.until {
		out = append(out, ip)
	}
	return out
}

// emptyOrSoftBan answers a listing or product request whose true answer
// is empty with the site's no-results shape, and one from a soft-banned
// IP with that same shape; done is false for a request the routes
// serve. It records the answer's meaning in e.
func (s *Site) emptyOrSoftBan(w http.ResponseWriter, r *http.Request, e *Entry) (Verdict, bool) {
	m := s.truth(r)
	if m == "" {
		return "", false
	}
	e.Meant = m
	banned := s.soft.judge(e.IP, e.Path, m, e.Start)
	switch {
	case banned && m == MeantItems:
		e.Meant = MeantBanned
		s.writeEmpty(w, r)
		return VerdictSoftBanned, true
	case m == MeantEmpty && s.name != SiteWildberries: // WB's own answer is its empty shape
		s.writeEmpty(w, r)
		return VerdictOK, true
	}
	return "", false
}

// truth is what the true answer to r holds: MeantItems or MeantEmpty for
// a listing (Ozon's through its page API too, and a Wildberries card
// list), "" for any other request.
func (s *Site) truth(r *http.Request) Meaning {
	var n int
	switch p := s.pages.(type) {
	case *wildberries:
		switch {
		case wbSearchPath(r.URL.Path):
			n = len(p.c.Search(SiteWildberries, r.URL.Query().Get("query"), pageParam(r, "page")))
		case wbDetailPath(r.URL.Path):
			n = len(p.found(r))
		default:
			return ""
		}
	case *ozon:
		q, page, ok := ozonListing(r)
		if !ok {
			return ""
		}
		n = len(p.c.Search(SiteOzon, q, page))
	case *avito:
		if r.URL.Path == AvitoItemsPath {
			n = len(p.c.Search(SiteAvito, r.URL.Query().Get("q"), pageParam(r, "p")))
			break
		}
		if strings.Count(strings.Trim(r.URL.Path, "/"), "/") != 0 || r.URL.Path == "/" {
			return ""
		}
		n = len(p.c.Search(SiteAvito, r.URL.Query().Get("q"), pageParam(r, "p")))
	default:
		return ""
	}
	if n == 0 {
		return MeantEmpty
	}
	return MeantItems
}

// writeEmpty writes the site's no-results answer to r: for Ozon's page
// API, the searchResultsError widget alone, with no tile widget.
func (s *Site) writeEmpty(w http.ResponseWriter, r *http.Request) {
	switch s.pages.(type) {
	case *wildberries:
		if wbDetailPath(r.URL.Path) {
			writeJSON(w, map[string][]wbProduct{"products": {}})
			return
		}
		wbNothingFound(w, r.URL.Query().Get("query"))
	case *ozon:
		q, _, _ := ozonListing(r)
		if ozonAPIRequest(r) {
			ozonAnswer(w, map[string]string{strings.TrimPrefix(ozonErrorState, "state-"): mustJSON(ozonNothingFound(q))})
			return
		}
		render(w, http.StatusOK, ozonEmptyTmpl, jsonMap{"Query": q, "ID": ozonSearchState,
			"State":   mustJSON(jsonMap{"tileLayout": "LAYOUT_GRID4", "items": []any{}, "cols": 12, "page": pageParam(r, "page")}),
			"ErrorID": ozonErrorState, "Error": mustJSON(ozonNothingFound(q))})
	case *avito:
		if r.URL.Path == AvitoItemsPath {
			writeJSON(w, avitoItems{ItemsOnPage: PageSizes[SiteAvito], Items: []avitoItem{}})
			return
		}
		render(w, http.StatusOK, avitoEmptyTmpl, avitoPage{Query: r.URL.Query().Get("q"), Location: r.PathValue("location")})
	}
}

// ozonErrorState is the id of Ozon's "nothing found" widget state.
const ozonErrorState = "state-searchResultsError-3547911-default-1"

// ozonNothingFound is the searchResultsError widget's state; its message
// is the one public clients look for (read 2026-12).
func ozonNothingFound(q string) jsonMap {
	return jsonMap{"title": "По запросу «" + q + "» ничего не нашлось",
		"message":  "По вашим параметрам ничего не нашлось.",
		"subtitle": "Попробуйте изменить запрос или поискать в другой категории", "type": "EMPTY_SEARCH"}
}

// ozonListing is the query and page of an Ozon search request: the HTML
// page's, or the page API's for a search page path; ok is false for any
// other request.
func ozonListing(r *http.Request) (q string, page int, ok bool) {
	switch {
	case r.URL.Path == OzonSearchPath:
		return r.URL.Query().Get("text"), pageParam(r, "page"), true
	case !ozonAPIRequest(r):
		return "", 0, false
	}
	u, err := url.Parse(r.URL.Query().Get("url"))
	if err != nil || u.Path != OzonSearchPath {
		return "", 0, false
	}
	page = 1
	if n, err := strconv.Atoi(u.Query().Get("page")); err == nil && n > 1 {
		page = n
	}
	return u.Query().Get("text"), page, true
}

// ozonAPIRequest says r asks Ozon's page API (either name of it).
func ozonAPIRequest(r *http.Request) bool {
	return r.URL.Path == OzonAPIPath || r.URL.Path == OzonComposerPath
}

// ozonEmptyTmpl is Ozon's search page when nothing matches: the results
// widget's frame with an empty items list, and the "nothing found"
// widget in place of the tiles and the paginator.
var ozonEmptyTmpl = template.Must(template.New("ozon-empty").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.Query}} — купить на OZON</title></head>
<body><div id="layoutPage"><div data-widget="searchResultsV2"><div id="{{.ID}}" data-state="{{.State}}"></div></div>
<div data-widget="searchResultsError"><div id="{{.ErrorID}}" data-state="{{.Error}}"></div></div></div></body></html>
`))

// avitoEmptyTmpl is Avito's search page when nothing matches: the serp
// frame with no cards and no pagination, and the "Ничего не найдено" block.
var avitoEmptyTmpl = template.Must(template.New("avito-empty").Parse(`<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>{{.Query}} — купить на Авито</title></head>
<body><div data-marker="catalog-serp"></div>
<div data-marker="no-results"><h2 data-marker="no-results/title">Ничего не найдено</h2>
<p>Попробуйте изменить запрос или расширить область поиска.</p></div>
</body></html>
`))

// SoftBan soft-bans ip on site from now for d (0: the rest of the run).
func (tb *Testbed) SoftBan(site, ip string, d time.Duration) {
	if s := tb.sites[site]; s != nil {
		s.soft.ban(ip, tb.now(), d)
	}
}

// SoftBanned reports whether ip is soft-banned on site now.
func (tb *Testbed) SoftBanned(site, ip string) bool {
	s := tb.sites[site]
	return s != nil && s.soft.banned(ip, tb.now())
}

// SoftBannedIPs maps each site to the IPs it ever soft-banned in the run.
func (tb *Testbed) SoftBannedIPs() map[string][]string {
	out := map[string][]string{}
	for name, s := range tb.sites {
		if ips := s.soft.ips(); len(ips) > 0 {
			out[name] = ips
		}
	}
	return out
}
