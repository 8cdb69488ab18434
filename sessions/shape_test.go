package sessions_test

import (
	"context"
	"net/url"
	"regexp"
	"testing"
	"time"

	"crawlq/detect"
	"crawlq/fetcher"
	"crawlq/proxies"
	"crawlq/sessions"
	"crawlq/testbed"
)

// wbShape makes the testbed's Wildberries API paths XHRs with the site's
// own headers, from the site's home page.
func wbShape(site, rawURL string) sessions.Shape {
	if site != wb {
		return sessions.Shape{}
	}
	u, _ := url.Parse(rawURL)
	return sessions.Shape{Kind: fetcher.XHR, From: u.Scheme + "://" + u.Host + "/", Extra: []fetcher.HeaderField{
		{Name: "deviceid", Value: "site_{deviceid}"}, {Name: "x-queryid", Value: "{queryid}"},
		{Name: "x-requested-with", Value: "XMLHttpRequest"}, {Name: "x-spa-version", Value: "13.15.1"},
		{Name: "x-userid", Value: "0"}}}
}

// TestAPICallsGoOutAsTheSitesXHRFromTheLastPage: the testbed refuses a
// Wildberries API call without a Referer or the site's headers; shaped by
// the Manager, the call comes from the page the session loaded last and
// is served.
func TestAPICallsGoOutAsTheSitesXHRFromTheLastPage(t *testing.T) {
	w := newWorld(t, 2)
	ctx := context.Background()
	m := sessions.NewManager(sessions.Config{Broker: w.broker, Redis: w.rdb, Holder: "s1", LeaseTTL: 10 * time.Second,
		Shape: func(site, rawURL string) sessions.Shape {
			if rawURL == w.tb.SiteURL(wb)+"/" {
				return sessions.Shape{Kind: fetcher.Navigate}
			}
			sh := wbShape(site, rawURL)
			sh.From = "" // from the session's last page
			return sh
		}})
	s, err := m.Open(ctx, "job-xhr", wb, proxies.Datacenter)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Finish(ctx, proxies.OK(0))
	if _, err := s.Get(ctx, w.fetcher, w.detect, "page", w.tb.SiteURL(wb)+"/", 0); err != nil {
		t.Fatalf("home page: %v", err)
	}
	step, err := s.Get(ctx, w.fetcher, w.detect, "search", searchURL(w.tb.SiteURL(wb), 1), 1)
	if err != nil || step.Verdict.Kind != detect.OK {
		t.Fatalf("search api: verdict %v err %v", step.Verdict, err)
	}
	es := siteEntries(w.tb, wb)
	if last := es[len(es)-1]; last.Verdict != testbed.VerdictOK {
		t.Errorf("api call: verdict %s (%s)", last.Verdict, last.Refused)
	}
	if id := s.DeviceID(); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) || id != s.DeviceID() {
		t.Errorf("device id %q is not 32 stable hex digits", id)
	}
}
