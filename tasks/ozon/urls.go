package ozon

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"crawlq/tasks/site"
)

func normalizeSearch(s *site.Site, r site.Request) (site.Request, error) {
	r, err := site.CheckListing(s, KindSearch, r, false)
	return site.Request{Query: r.Query, Page: r.Page}, err
}

// searchURL: the page API's answer for /search/?text=…&page=N.
func searchURL(s *site.Site, r site.Request) string {
	return apiURL(s.Endpoint(site.EndpointWeb), "/search/?text="+url.QueryEscape(r.Query)+"&page="+strconv.Itoa(r.Page))
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// normalizeCategory wants a category slug such as "korm-dlya-koshek-12348"
// (a /category/<slug>/ URL is accepted too).
func normalizeCategory(s *site.Site, r site.Request) (site.Request, error) {
	r, err := site.CheckListing(s, KindCategory, r, true)
	if err != nil {
		return site.Request{}, err
	}
	c := strings.TrimSpace(r.Category)
	if i := strings.Index(c, "/category/"); i >= 0 {
		c = c[i+len("/category/"):]
	}
	c, _, _ = strings.Cut(c, "?")
	c = strings.Trim(c, "/")
	if !slugRe.MatchString(c) {
		return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindCategory, Field: "category",
			Reason: "want a category slug such as korm-dlya-koshek-12348, got " + strconv.Quote(r.Category)}
	}
	return site.Request{Category: c, Page: r.Page}, nil
}

// categoryURL: the page API's answer for /category/<slug>/?page=N.
func categoryURL(s *site.Site, r site.Request) string {
	return apiURL(s.Endpoint(site.EndpointWeb), "/category/"+r.Category+"/?page="+strconv.Itoa(r.Page))
}

// productPathRe matches /product/<slug>-<id>/ and /product/<id>/.
var productPathRe = regexp.MustCompile(`/product/(?:([a-z0-9-]*)-)?([0-9]{1,20})/?$`)

// normalizeProduct takes a SKU or a pasted product URL; a URL keeps its
// slug so the page is fetched without a redirect.
func normalizeProduct(s *site.Site, r site.Request) (site.Request, error) {
	if r.URL != "" {
		u, err := site.ParseURL(s, KindProduct, r.URL)
		if err != nil {
			return site.Request{}, err
		}
		m := productPathRe.FindStringSubmatch(u.Path)
		if m == nil {
			return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindProduct, Field: "url",
				Reason: "no product ID in " + strconv.Quote(r.URL) + " (want …/product/<slug>-<id>/)"}
		}
		return site.Request{ID: m[2], URL: productPath(m[1], m[2])}, nil
	}
	id, err := site.CheckID(s, KindProduct, r.ID)
	return site.Request{ID: id}, err
}

func productPath(slug, id string) string {
	if slug == "" {
		return "/product/" + id + "/"
	}
	return "/product/" + slug + "-" + id + "/"
}

// productURL: /product/<slug>-<id>/ when the slug is known, else
// /product/<id>/ (Ozon redirects it to the slugged page).
func productURL(s *site.Site, r site.Request) string {
	if r.URL != "" {
		return s.Endpoint(site.EndpointWeb) + r.URL
	}
	return s.Endpoint(site.EndpointWeb) + productPath("", r.ID)
}

// idFromLink returns the SKU at the end of a product link's path.
func idFromLink(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	if m := productPathRe.FindStringSubmatch(u.Path); m != nil {
		return m[2]
	}
	return ""
}
