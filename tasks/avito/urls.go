package avito

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"crawlq/tasks/site"
)

var (
	locationRe = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	categoryRe = regexp.MustCompile(`^[a-z0-9_-]{1,64}(/[A-Za-z0-9_-]{1,96}){0,5}$`)
	// itemPathRe matches /<location>/<category>/<slug>_<id>.
	itemPathRe = regexp.MustCompile(`^/[a-z0-9_-]+/[a-z0-9_-]+/[^/]*_([0-9]{1,20})/?$`)
	shortRe    = regexp.MustCompile(`^/([0-9]{1,20})/?$`)
)

func normalizeSearch(s *site.Site, r site.Request) (site.Request, error) {
	return normalizeListing(s, KindSearch, r, false)
}

func normalizeCategory(s *site.Site, r site.Request) (site.Request, error) {
	return normalizeListing(s, KindCategory, r, true)
}

func normalizeListing(s *site.Site, kind string, r site.Request, isCategory bool) (site.Request, error) {
	r, err := site.CheckListing(s, kind, r, isCategory)
	if err != nil {
		return site.Request{}, err
	}
	bad := func(field, reason string) error {
		return &site.RequestError{Site: s.Name, Kind: kind, Field: field, Reason: reason}
	}
	loc := strings.ToLower(strings.Trim(strings.TrimSpace(r.Location), "/"))
	if loc == "" {
		loc = DefaultLocation
	}
	if !locationRe.MatchString(loc) {
		return site.Request{}, bad("location", "want a region slug such as moskva, got "+strconv.Quote(r.Location))
	}
	cat := strings.Trim(strings.TrimSpace(r.Category), "/")
	if isCategory && !categoryRe.MatchString(cat) {
		return site.Request{}, bad("category", "want a category path such as kvartiry/sdam, got "+strconv.Quote(r.Category))
	}
	return site.Request{Query: r.Query, Page: r.Page, Location: loc, Category: cat}, nil
}

// listingURL: /<location>[/<category>]?q=…&p=N (q omitted when empty).
func listingURL(s *site.Site, r site.Request) string {
	path := "/" + r.Location
	if r.Category != "" {
		path += "/" + r.Category
	}
	q := "?"
	if r.Query != "" {
		q += "q=" + url.QueryEscape(r.Query) + "&"
	}
	return s.Endpoint(site.EndpointWeb) + path + q + "p=" + strconv.Itoa(r.Page)
}

// normalizeAPI checks a js/items search: the location is a numeric
// locationId (637640 is Moscow) or none (all of Russia).
func normalizeAPI(s *site.Site, r site.Request) (site.Request, error) {
	r, err := normalizeListing(s, KindSearchAPI, r, false)
	if err != nil {
		return site.Request{}, err
	}
	if r.Location != DefaultLocation && !digits(r.Location) {
		return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindSearchAPI, Field: "location",
			Reason: "want a numeric locationId such as 637640, got " + strconv.Quote(r.Location)}
	}
	return r, nil
}

// apiURL: /web/1/js/items?q=…&p=N&updateListOnly=true[&locationId=N], as
// the site's own pages ask for the results after the first.
func apiURL(s *site.Site, r site.Request) string {
	v := url.Values{"q": {r.Query}, "p": {strconv.Itoa(r.Page)}, "updateListOnly": {"true"}}
	if r.Location != DefaultLocation {
		v.Set("locationId", r.Location)
	}
	return s.Endpoint(site.EndpointWeb) + ItemsPath + "?" + v.Encode()
}

// normalizeItem takes a listing ID or a pasted listing URL
// (…/<location>/<category>/<slug>_<id>); the URL's path is kept.
func normalizeItem(s *site.Site, r site.Request) (site.Request, error) {
	if r.URL == "" {
		id, err := site.CheckID(s, KindItem, r.ID)
		return site.Request{ID: id}, err
	}
	u, err := site.ParseURL(s, KindItem, r.URL)
	if err != nil {
		return site.Request{}, err
	}
	if m := itemPathRe.FindStringSubmatch(u.Path); m != nil {
		return site.Request{ID: m[1], URL: strings.TrimRight(u.EscapedPath(), "/")}, nil
	}
	if m := shortRe.FindStringSubmatch(u.Path); m != nil {
		return site.Request{ID: m[1]}, nil
	}
	return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindItem, Field: "url",
		Reason: "no listing ID in " + strconv.Quote(r.URL) + " (want …/<location>/<category>/<slug>_<id>)"}
}

// itemURL: the listing's path when known, else /<id> (Avito redirects it
// to the listing).
func itemURL(s *site.Site, r site.Request) string {
	if r.URL != "" {
		return s.Endpoint(site.EndpointWeb) + r.URL
	}
	return s.Endpoint(site.EndpointWeb) + "/" + r.ID
}

// idFromLink returns the ID at the end of a listing link.
func idFromLink(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	if m := itemPathRe.FindStringSubmatch(u.Path); m != nil {
		return m[1]
	}
	return ""
}
