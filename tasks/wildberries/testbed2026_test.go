package wildberries_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
	"crawlq/results/item"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
	"crawlq/testbed"
	"crawlq/testbed/sitetest"
)

// TestTestbedCatalogV4 walks a category through the URLs the category kind
// builds (catalog v4) until Next is false: the items are exactly the
// catalog's; the retired v2 path of the same category is a 404, as on the
// real site since July 2026.
func TestTestbedCatalogV4(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	q := sitetest.Query(tb, "wildberries")
	req := site.Request{Category: "electronic?cat=" + url.QueryEscape(q)}
	var got []item.Item
	for req.Page = 1; req.Page <= 100; req.Page++ {
		u, err := s.URL("category", req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(u, "/catalog/electronic/v4/catalog?") {
			t.Fatalf("category URL %s is not catalog v4", u)
		}
		page, err := s.Parse("category", sitetest.Get(t, u), u, at)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Items...)
		if !page.Next {
			break
		}
	}
	if d := cmp.Diff(wantItems(s, tb.Catalog.Matches("wildberries", q)), got); d != "" {
		t.Errorf("category items (-catalog +parsed):\n%s", d)
	}
	if st := status(t, s.BaseURL+"/catalog/electronic/v2/catalog?cat="+url.QueryEscape(q)+"&page=1"); st != http.StatusNotFound {
		t.Errorf("catalog v2: status %d, want 404", st)
	}
}

// TestTestbedLegacySearchV9: the legacy API's search (v9 on search.wb.ru)
// walks to the catalog's matches; the retired v5 path is a 404.
func TestTestbedLegacySearchV9(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	s.API = wildberries.APILegacy
	q := sitetest.Query(tb, "wildberries")
	got, _ := sitetest.WalkSearch(t, s, site.Request{Query: q})
	if d := cmp.Diff(wantItems(s, tb.Catalog.Matches("wildberries", q)), got); d != "" {
		t.Errorf("search v9 items (-catalog +parsed):\n%s", d)
	}
	if st := status(t, s.BaseURL+"/exactmatch/ru/common/v5/search?query=x"); st != http.StatusNotFound {
		t.Errorf("search v5: status %d, want 404", st)
	}
}

// TestTestbedWall: in challenge mode the testbed's wall (the home page's
// challenge and the APIs' refusal) has the status its rule says, 498 by
// default or 200; the built-in rules judge both Challenge, and the
// request log records them as challenges served.
func TestTestbedWall(t *testing.T) {
	for _, wall := range []int{0, http.StatusOK} {
		tb, err := testbed.Start(context.Background(), testbed.Config{Seed: 7, Proxies: 1, Sites: map[string]testbed.SiteRules{
			testbed.SiteWildberries: {Challenge: &testbed.ChallengeRule{WallStatus: wall}}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tb.Close)
		s := sitetest.SiteOn(t, tb, "wildberries")
		want := 498
		if wall != 0 {
			want = wall
		}
		d := detect.New(detect.Builtin())
		for _, kind := range []string{"search", "product"} {
			u, _ := s.URL(kind, site.Request{Query: "x", ID: "1", Page: 1})
			judgeWall(t, d, kind, u, want)
		}
		judgeWall(t, d, "challenge", s.BaseURL+"/", want)
		if got := tb.Log.Challenges().Served; got != 3 {
			t.Errorf("wall %d: the log counts %d challenges served, want 3", want, got)
		}
	}
}

func judgeWall(t *testing.T, d *detect.Detector, kind, u string, want int) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	v := d.Judge(wildberries.Name, kind, &detect.Response{Status: resp.StatusCode, FinalURL: u, Body: body, Header: resp.Header})
	if resp.StatusCode != want || v.Kind != detect.Challenge {
		t.Errorf("GET %s: status %d, verdict %s; want %d, challenge", u, resp.StatusCode, v, want)
	}
}

func status(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
