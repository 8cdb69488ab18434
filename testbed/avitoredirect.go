package testbed

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Locations whose Avito search the testbed answers with a redirect stub
// instead of results: status 200, a page whose data-mfe-state holds
// loaderData.data {status 301, redirected: true, url}, in the shape of
// the real stub of 2026-07 (tasks/avito/testdata/README.md). The stub
// names the same search (query and page) at another location.
const (
	// AvitoMovedLocation's stub names AvitoCanonicalLocation's search,
	// which has the results.
	AvitoMovedLocation     = "msk"
	AvitoCanonicalLocation = "moskva"
	// AvitoLoopLocation's stub names AvitoLoopTarget's search, which is a
	// stub naming AvitoLoopLocation's.
	AvitoLoopLocation = "spb-old"
	AvitoLoopTarget   = "piter"
)

// avitoMoved maps a stubbed location to the one its stub names.
var avitoMoved = map[string]string{
	AvitoMovedLocation: AvitoCanonicalLocation,
	AvitoLoopLocation:  AvitoLoopTarget,
	AvitoLoopTarget:    AvitoLoopLocation,
}

// redirectStub writes the stub for a search at a moved location; false
// when the location is not one.
func (a *avito) redirectStub(w http.ResponseWriter, r *http.Request) bool {
	to, ok := avitoMoved[r.PathValue("location")]
	if !ok {
		return false
	}
	target := url.URL{Path: "/" + to, RawQuery: r.URL.RawQuery}
	var state bytes.Buffer
	enc := json.NewEncoder(&state)
	enc.SetEscapeHTML(false) // the real stub's state is raw JSON: "url":"/…?a=1&b=2"
	enc.Encode(map[string]any{
		"i18n": map[string]any{"hasMessages": true, "locale": "ru-RU"},
		"loaderData": map[string]any{"data": map[string]any{
			"status":     map[string]any{"code": 301, "header": "HTTP/1.1 301 Moved Permanently"},
			"redirected": true, "url": target.String()}},
	})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, `<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>Авито: сайт объявлений</title></head>
<body><div id="app"></div>
<script type="mime/invalid" data-mfe-state="true">`+strings.TrimSpace(state.String())+`</script>
</body></html>
`)
	return true
}
