package wildberries_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"crawlq/detect"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
	"crawlq/testbed"
	"crawlq/testbed/sitetest"
)

// resolutionFiles are the query-resolution answers built from public
// clients' code (testdata/2026/README.md: no capture was found).
var resolutionFiles = []string{
	"built_from_public_code_search_resolution_shardkey.json",
	"built_from_public_code_search_resolution_metadata.json",
}

// TestNothingFoundIsAnEmptyAnswer: Wildberries' own "nothing found", the
// search's query-resolution object without a products key (issue 36.3),
// is judged Suspect as any empty list on page 1 (asked again from a
// second proxy; two of them agree), and parses to an empty last page.
// JSON of another shape stays Blocked and unrecognized, never empty.
func TestNothingFoundIsAnEmptyAnswer(t *testing.T) {
	d := detect.New(detect.Builtin())
	judge := func(body []byte) detect.Verdict {
		return d.Judge(wildberries.Name, "search", &detect.Response{Status: http.StatusOK, Body: body, Page: 1,
			Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}})
	}
	wantRule := map[string]string{
		resolutionFiles[0]: "empty list shardKey on page 1",
		resolutionFiles[1]: "empty list metadata.catalog_value on page 1",
	}
	for _, name := range resolutionFiles {
		body := sample2026(t, name)
		if json.Valid(body) && slices.Contains(topKeys(t, body), "products") {
			t.Fatalf("%s has a products key", name)
		}
		v := judge(body)
		if v.Kind != detect.Suspect || v.Rule != wantRule[name] || detect.Decide(v, judge(body)) != detect.Agreed {
			t.Errorf("%s: verdict %v (rule %q); want suspect by %q, agreeing with itself", name, v, v.Rule, wantRule[name])
		}
		page, err := site.Parse(wildberries.Name, "search", body, "", at)
		if err != nil || len(page.Items) != 0 || page.Next || len(page.Follow) != 0 {
			t.Errorf("%s parsed: %d items, next %v, err %v; want an empty last page", name, len(page.Items), page.Next, err)
		}
	}
	for _, body := range []string{`{"error":"bad request"}`, `{"state":0,"version":2}`} {
		if v := judge([]byte(body)); v.Kind != detect.Blocked {
			t.Errorf("%s: verdict %v, want blocked (an unknown shape)", body, v)
		}
		if _, err := site.Parse(wildberries.Name, "search", []byte(body), "", at); !errors.Is(err, site.ErrUnrecognized) {
			t.Errorf("%s parsed: err %v, want unrecognized", body, err)
		}
	}
}

// TestTestbedNothingFound: the testbed answers a query its catalog has
// nothing for with the query-resolution object, the keys of the file
// built from public code and no products key, on the current and the
// legacy search; crawlq's rules and parser take it as above.
func TestTestbedNothingFound(t *testing.T) {
	tb := sitetest.Testbed(t)
	s := sitetest.SiteOn(t, tb, "wildberries")
	q := tb.Catalog.NoResultQueries(testbed.SiteWildberries, 1)[0]
	want := topKeys(t, sample2026(t, resolutionFiles[0]))
	for _, path := range []string{testbed.WBSearchPath, testbed.WBLegacySearchPath} {
		u := s.BaseURL + path + "?" + url.Values{"query": {q}, "page": {"1"}}.Encode()
		body := sitetest.Get(t, u)
		if d := cmp.Diff(want, topKeys(t, body)); d != "" {
			t.Errorf("%s keys (-built from public code +testbed):\n%s", path, d)
		}
		v := detect.New(detect.Builtin()).Judge(wildberries.Name, "search", &detect.Response{Status: http.StatusOK, Body: body, Page: 1})
		page, err := s.Parse("search", body, u, at)
		if v.Kind != detect.Suspect || err != nil || len(page.Items) != 0 {
			t.Errorf("%s: verdict %v, %d items, err %v; want suspect and an empty page", path, v, len(page.Items), err)
		}
	}
}

// topKeys lists the keys of a JSON object, sorted.
func topKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
