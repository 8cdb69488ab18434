package testbed

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// apiGet asks Ozon's page API for the page path and decodes the states.
func apiGet(t *testing.T, tb *Testbed, path string) (int, map[string]json.RawMessage) {
	t.Helper()
	a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteOzon)+OzonAPIPath+"?url="+url.QueryEscape(path))
	var ans struct{ WidgetStates map[string]string }
	out := map[string]json.RawMessage{}
	if a.status == http.StatusOK {
		if err := json.Unmarshal(a.body, &ans); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for k, v := range ans.WidgetStates {
			out[k] = json.RawMessage(v)
		}
	}
	return a.status, out
}

// TestOzonHTMLEightTilesAPIAll: the HTML search page shows OzonHTMLTiles
// tiles; the page API answers the whole page in the 2026 tile schema
// (states as JSON strings) and names the next page with a paginator
// token, none on the last page; a wrong token is refused (400) and
// reported by Log.OzonRefused; a product's answer carries webCurrentSeller.
func TestOzonHTMLEightTilesAPIAll(t *testing.T) {
	tb := startTB(t, Config{Sites: map[string]SiteRules{SiteOzon: {}}})
	q := multiPageQuery(t, tb.Catalog)
	var st ozonItems
	a := get(t, clientFrom(t, "127.0.0.1", false), tb.SiteURL(SiteOzon)+OzonSearchPath+"?text="+url.QueryEscape(q))
	ozonState(t, doc(t, bytes.NewReader(a.body)), "searchResultsV2", &st)
	if len(st.Items) != OzonHTMLTiles {
		t.Fatalf("HTML page shows %d tiles; want %d", len(st.Items), OzonHTMLTiles)
	}
	path := OzonSearchPath + "?text=" + url.QueryEscape(q)
	for page := 1; path != ""; page++ {
		_, ws := apiGet(t, tb, path)
		var grid struct{ Items []map[string]any }
		var pager struct{ NextPage string }
		if json.Unmarshal(ws[ozonGridWidget], &grid) != nil || json.Unmarshal(ws[ozonPagerWidget], &pager) != nil {
			t.Fatalf("page %d: states %v", page, ws)
		}
		if want := tb.Catalog.Search(SiteOzon, q, page); len(grid.Items) != len(want) || grid.Items[0]["id"] != want[0].ID {
			t.Fatalf("page %d: %d tiles, first %v; want %d, first %s", page, len(grid.Items), grid.Items[0]["id"], len(want), want[0].ID)
		}
		if pager.NextPage != "" && !strings.Contains(pager.NextPage, "paginator_token=") {
			t.Fatalf("page %d: nextPage %q has no paginator token", page, pager.NextPage)
		}
		path = pager.NextPage
	}
	if s, _ := apiGet(t, tb, OzonSearchPath+"?text="+url.QueryEscape(q)+"&page=2&paginator_token=forged"); s != http.StatusBadRequest {
		t.Fatalf("forged token: status %d; want 400", s)
	}
	if r := tb.Log.OzonRefused(); len(r) != 1 || !strings.Contains(r[0].Path, "forged") {
		t.Fatalf("refused %+v; want the forged-token request", r)
	}
	p := tb.Catalog.Products(SiteOzon)[3]
	_, ws := apiGet(t, tb, p.URL)
	var seller struct {
		SellerCell struct {
			CenterBlock struct{ Title struct{ Text string } }
		}
	}
	if json.Unmarshal(ws[ozonSellerWidget], &seller) != nil || seller.SellerCell.CenterBlock.Title.Text != p.Seller {
		t.Fatalf("product answer: seller state %s; want %q", ws[ozonSellerWidget], p.Seller)
	}
}

// multiPageQuery is a title word whose Ozon search has several pages.
func multiPageQuery(t *testing.T, c *Catalog) string {
	t.Helper()
	for _, p := range c.Products(SiteOzon) {
		for _, w := range strings.Fields(p.Title) {
			if c.Pages(SiteOzon, w) >= 2 {
				return w
			}
		}
	}
	t.Fatal("no Ozon query with several pages")
	return ""
}
