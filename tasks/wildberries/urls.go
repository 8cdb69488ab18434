package wildberries

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"crawlq/tasks/site"
)

// apiParams are the fixed query parameters the real APIs want (Moscow
// destination, rubles); the testbed ignores them.
const apiParams = "&appType=1&curr=rub&dest=-1257786&spp=30"

func normalizeSearch(s *site.Site, r site.Request) (site.Request, error) {
	r, err := site.CheckListing(s, KindSearch, r, false)
	return site.Request{Query: r.Query, Page: r.Page}, err
}

// apiBase is the base URL of a current or legacy API endpoint. Under a
// base_url (one host serving every path, as the testbed does) the current
// APIs keep their /__internal/ prefix.
func apiBase(s *site.Site, name, internal string) string {
	base := s.Endpoint(name)
	if s.BaseURL != "" && s.API != APILegacy {
		base += internal
	}
	return base
}

// searchURL: /exactmatch/ru/common/v18/search?query=…&page=N under
// www.wildberries.ru/__internal/u-search (legacy: v9 on search.wb.ru, the
// version that still answers anonymously in 2026; docs/sites.md).
func searchURL(s *site.Site, r site.Request) string {
	version := "v18"
	if s.API == APILegacy {
		version = "v9"
	}
	return apiBase(s, site.EndpointSearch, internalSearch) + "/exactmatch/ru/common/" + version + "/search?query=" +
		url.QueryEscape(r.Query) + "&page=" + strconv.Itoa(r.Page) + apiParams + "&resultset=catalog&sort=popular"
}

var shardRe = regexp.MustCompile(`^[a-z0-9_]+$`)

// normalizeCategory wants Category "SHARD?QUERY", e.g. "beauty3?cat=9000"
// (the shard and query of a catalog.wb.ru menu entry).
func normalizeCategory(s *site.Site, r site.Request) (site.Request, error) {
	r, err := site.CheckListing(s, KindCategory, r, true)
	if err != nil {
		return site.Request{}, err
	}
	shard, q, ok := strings.Cut(strings.TrimSpace(r.Category), "?")
	if _, perr := url.ParseQuery(q); !ok || !shardRe.MatchString(shard) || q == "" || perr != nil {
		return site.Request{}, &site.RequestError{Site: s.Name, Kind: KindCategory, Field: "category",
			Reason: "want SHARD?QUERY such as beauty3?cat=9000, got " + strconv.Quote(r.Category)}
	}
	return site.Request{Category: shard + "?" + q, Page: r.Page}, nil
}

// categoryURL: /catalog/<shard>/v4/catalog?<query>&page=N on catalog.wb.ru.
// Since July 2026 only the v4 shard-path form answers; v2 is a 404
// (docs/sites.md).
func categoryURL(s *site.Site, r site.Request) string {
	shard, q, _ := strings.Cut(r.Category, "?")
	return s.Endpoint(site.EndpointCatalog) + "/catalog/" + shard + "/v4/catalog?" + q +
		"&page=" + strconv.Itoa(r.Page) + apiParams + "&locale=ru&sort=popular"
}

var (
	detailPathRe = regexp.MustCompile(`/catalog/([0-9]{1,20})/detail\.aspx`)
)

// normalizeProduct takes an nmId or a pasted product URL
// (…/catalog/<id>/detail.aspx, or a card API URL with nm=<id>).
func normalizeProduct(s *site.Site, r site.Request) (site.Request, error) {
	if r.ID == "" && r.URL != "" {
		id, err := idFromURL(s, r.URL)
		if err != nil {
			return site.Request{}, err
		}
		r.ID = id
	}
	id, err := site.CheckID(s, KindProduct, r.ID)
	return site.Request{ID: id}, err
}

func idFromURL(s *site.Site, raw string) (string, error) {
	u, err := site.ParseURL(s, KindProduct, raw)
	if err != nil {
		return "", err
	}
	if m := detailPathRe.FindStringSubmatch(u.Path); m != nil {
		return m[1], nil
	}
	if nm := u.Query().Get("nm"); nm != "" {
		return nm, nil
	}
	return "", &site.RequestError{Site: s.Name, Kind: KindProduct, Field: "url",
		Reason: "no product ID in " + strconv.Quote(raw) + " (want …/catalog/<id>/detail.aspx)"}
}

// productURL: /cards/v4/detail?nm=ID under
// www.wildberries.ru/__internal/u-card (legacy: on card.wb.ru); under
// fetch: browser the product page a user opens, /catalog/ID/detail.aspx
// (its JSON is no page to render), read from its 2026 markup.
func productURL(s *site.Site, r site.Request) string {
	if s.FetchPolicy() == site.FetchBrowser {
		return ItemURL(s, r.ID)
	}
	return apiBase(s, site.EndpointCard, internalCard) + "/cards/v4/detail?nm=" + r.ID + apiParams
}
