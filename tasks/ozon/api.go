package ozon

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"

	"crawlq/tasks/site"
)

// APIPath is Ozon's page API: GET APIPath?url=<page path> answers the
// page's widgets as JSON ({"widgetStates":{"<widget>-<n>-default-1":
// "<JSON string>"},"nextPage":…}). Public 2026 clients call it for every
// listing page: the HTML shows eight tiles, the API the whole page.
const APIPath = "/api/entrypoint-api.bx/page/json/v2"

// apiURL is the page API's URL for the page path (such as
// "/search/?text=x&page=2") on base.
func apiURL(base, path string) string {
	return strings.TrimRight(base, "/") + APIPath + "?url=" + url.QueryEscape(path)
}

// apiAnswer is the page API's answer. widgetStates' values are JSON
// strings, each a widget's state.
type apiAnswer struct {
	WidgetStates map[string]string `json:"widgetStates"`
	NextPage     string            `json:"nextPage"`
}

// readAPI decodes a page API answer into the widget states by widget
// name; ok is false when the body is JSON but not that shape.
func readAPI(body []byte) (apiAnswer, states, bool, error) {
	var a apiAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return a, nil, false, site.BadBody("page api: %w", err)
	}
	if a.WidgetStates == nil {
		return a, nil, false, nil
	}
	st := states{}
	for _, key := range slices.Sorted(maps.Keys(a.WidgetStates)) {
		raw := strings.TrimSpace(a.WidgetStates[key])
		if raw == "" || raw == "{}" {
			continue
		}
		if !json.Valid([]byte(raw)) {
			return a, nil, false, site.BadBody("page api: widgetStates[%q] is not a JSON string of a state", key)
		}
		name, _, _ := strings.Cut(key, "-")
		st[name] = append(st[name], json.RawMessage(raw))
	}
	return a, st, true, nil
}

// nextPage is the path of the next listing page: the answer's own
// nextPage, else the paginator widget's; "" on the last page.
func nextPage(top string, st states) string {
	if top != "" {
		return top
	}
	for _, w := range paginatorWidgets {
		var p struct {
			NextPage string `json:"nextPage"`
		}
		if ok, err := st.first(w, &p); ok && err == nil && p.NextPage != "" {
			return p.NextPage
		}
	}
	return ""
}

// nextAPIURL is the page API's URL of the next page path on the origin of
// pageURL (else the site's web endpoint). A next page that is not a path
// on the site (another host, a scheme) is not followed.
func nextAPIURL(s *site.Site, pageURL, next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return ""
	}
	base := site.Origin(pageURL)
	if base == "" {
		base = s.Endpoint(site.EndpointWeb)
	}
	return apiURL(base, next)
}
