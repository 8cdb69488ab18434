package sitetest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"crawlq/tasks/site"
)

// FuzzParse runs a site's parse fuzz target: every input is parsed as each
// kind of the site. The seed corpus (the package's
// testdata/fuzz/FuzzParse) holds the real samples and the testbed's
// pages; a few tiny seeds are added here. A body parses or fails with a
// *site.ParseError wrapping ErrBadBody or ErrUnrecognized, never a
// recovered panic; a parsed page has items of this site with an ID and
// valid UTF-8 text, and follow targets of the kind's follow kind.
func FuzzParse(f *testing.F, siteName string) {
	for _, s := range []string{"", "{}", "[]", "null", "<html></html>", "{\"data\":{\"products\":[]}}",
		"<html><head><title>Доступ ограничен</title></head></html>", "{\"data\":{\"products\":[{\"id\":1}]}}"} {
		f.Add([]byte(s))
	}
	s, err := site.Get(siteName)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range s.KindNames() {
			page, err := s.Parse(kind, body, "https://example.test/page?page=2", FetchedAt)
			if err != nil {
				checkParseError(t, kind, err)
				continue
			}
			checkPage(t, s, kind, page)
		}
	})
}

func checkParseError(t *testing.T, kind string, err error) {
	t.Helper()
	var pe *site.ParseError
	if !errors.As(err, &pe) || pe.Kind != kind || !(errors.Is(err, site.ErrBadBody) || errors.Is(err, site.ErrUnrecognized)) {
		t.Fatalf("%s: error %v (%T) is not a *site.ParseError wrapping ErrBadBody or ErrUnrecognized", kind, err, err)
	}
	if strings.Contains(err.Error(), "parser panicked") {
		t.Fatalf("%s: the parser panicked: %v", kind, err)
	}
}

func checkPage(t *testing.T, s *site.Site, kind string, page site.Page) {
	t.Helper()
	k, _ := s.Kind(kind)
	for _, it := range page.Items {
		if it.Site != s.Name || it.ID == "" || !utf8.ValidString(it.Title) || !utf8.ValidString(it.Seller) || it.FetchedAt != FetchedAt {
			t.Fatalf("%s: bad item %+v", kind, it)
		}
	}
	if !k.Listing && (page.Next || len(page.Follow) > 0) {
		t.Fatalf("%s is not a listing but its page has next=%v, %d targets", kind, page.Next, len(page.Follow))
	}
	for _, tg := range page.Follow {
		if tg.Site != s.Name || tg.Kind != k.Follow || tg.ID == "" || tg.URL == "" {
			t.Fatalf("%s: bad follow target %+v", kind, tg)
		}
	}
}
