package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"crawlq/proxies"
)

// PageSize is the number of proxy rows the pool page and /api/pool show
// per page.
const PageSize = 50

// Sort orders of the proxy table.
const (
	SortProxy = "proxy" // by proxy ID, then site (default)
	SortWorst = "worst" // worst success rate first (rows with requests first)
	SortBans  = "bans"  // most bans first
)

// Query selects proxy rows: every field is optional and parsed from the
// URL parameters site, class, state, q, sort and page.
type Query struct {
	Site  string        `json:"site,omitempty"`
	Class proxies.Class `json:"class,omitempty"`
	State string        `json:"state,omitempty"`
	// Text matches a substring of the proxy ID or masked spec, ignoring case.
	Text string `json:"q,omitempty"`
	Sort string `json:"sort"`
	// Page counts from 1.
	Page int `json:"page"`
}

// ParseQuery reads a Query from URL parameters; an unknown state, class or
// sort, or a page that is not a positive number, is an error naming it.
func ParseQuery(v url.Values) (Query, error) {
	q := Query{Site: v.Get("site"), Class: proxies.Class(v.Get("class")), State: v.Get("state"),
		Text: strings.TrimSpace(v.Get("q")), Sort: v.Get("sort"), Page: 1}
	switch q.State {
	case "", proxies.StateReady, proxies.StateLeased, proxies.StateCooling, proxies.StateQuarantined:
	default:
		return q, fmt.Errorf("state %q: want ready, leased, cooling or quarantined", q.State)
	}
	if q.Class != "" && !q.Class.Valid() {
		return q, fmt.Errorf("class %q: want datacenter, residential or mobile", q.Class)
	}
	switch q.Sort {
	case "":
		q.Sort = SortProxy
	case SortProxy, SortWorst, SortBans:
	default:
		return q, fmt.Errorf("sort %q: want proxy, worst or bans", q.Sort)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return q, fmt.Errorf("page %q: want a number from 1", p)
		}
		q.Page = n
	}
	return q, nil
}

// Values is the query as URL parameters, defaults left out; with page
// set to p (0 leaves it out).
func (q Query) Values(p int) url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"site": q.Site, "class": string(q.Class), "state": q.State, "q": q.Text} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Sort != SortProxy {
		v.Set("sort", q.Sort)
	}
	if p > 1 {
		v.Set("page", strconv.Itoa(p))
	}
	return v
}

// matches reports whether r passes the filters.
func (q Query) matches(r *ProxyRow, text string) bool {
	return (q.Site == "" || r.Site == q.Site) && (q.Class == "" || r.Class == q.Class) &&
		(q.State == "" || r.State == q.State) &&
		(text == "" || strings.Contains(strings.ToLower(r.ID), text) || strings.Contains(strings.ToLower(r.Proxy), text))
}

// each calls f with every row that matches q, in q's order, until f
// returns false.
func (v *poolView) each(q Query, f func(*ProxyRow) bool) {
	text := strings.ToLower(q.Text)
	var idx []int32
	switch q.Sort {
	case SortWorst:
		idx = v.worst
	case SortBans:
		idx = v.bans
	}
	for i := range v.Rows {
		r := &v.Rows[i]
		if idx != nil {
			r = &v.Rows[idx[i]]
		}
		if q.matches(r, text) && !f(r) {
			return
		}
	}
}

// page returns the rows of q's page and how many rows match in all.
func (v *poolView) page(q Query, size int) (rows []ProxyRow, total int) {
	from := (q.Page - 1) * size
	rows = []ProxyRow{}
	v.each(q, func(r *ProxyRow) bool {
		if total >= from && total < from+size {
			rows = append(rows, *r)
		}
		total++
		return true
	})
	return rows, total
}
