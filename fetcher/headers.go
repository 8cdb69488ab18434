package fetcher

import (
	"net/url"
	"slices"
	"strings"
)

// Kind is what a request is to the browser its profile claims: the
// browser sends another header set for each.
type Kind int

const (
	// Navigate is a top-level page load: a typed URL (no Referer) or a
	// link followed from Referer.
	Navigate Kind = iota
	// XHR is a fetch() or XMLHttpRequest the page Referer's script makes:
	// the site's API JSON calls.
	XHR
)

// String is "navigate" or "xhr".
func (k Kind) String() string {
	if k == XHR {
		return "xhr"
	}
	return "navigate"
}

// Header values the browsers send, as measured from Debian's chromium
// 156.0.8078.114 and firefox-esr 153.8.0esr through a TLS-terminating
// witness (fetcher/headers_test.go).
const (
	chromeNavAccept  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
	firefoxNavAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	xhrAccept        = "*/*"
	// BrowserAcceptEncoding is what both browsers advertise on https.
	BrowserAcceptEncoding = "gzip, deflate, br, zstd"
)

// headerSet is one browser's header names for one request kind, in the
// order it sends them, with the fixed values.
type headerSet struct {
	order []string
	fixed map[string]string
	// extraAfter is the header the page's own headers (x-requested-with,
	// …) follow; "" interleaves them the way Chromium does.
	extraAfter string
}

var (
	chromeNavigate = headerSet{
		order: []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "upgrade-insecure-requests",
			"user-agent", "accept", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest",
			"referer", "accept-encoding", "accept-language", "cookie", "priority"},
		fixed: map[string]string{"upgrade-insecure-requests": "1", "accept": chromeNavAccept,
			"sec-fetch-mode": "navigate", "sec-fetch-user": "?1", "sec-fetch-dest": "document", "priority": "u=0, i"},
		extraAfter: "priority",
	}
	chromeXHR = headerSet{
		order: []string{"sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "accept", "origin",
			"sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "referer", "accept-encoding", "accept-language",
			"cookie", "priority"},
		fixed: map[string]string{"accept": xhrAccept, "sec-fetch-mode": "cors", "sec-fetch-dest": "empty", "priority": "u=1, i"},
	}
	firefoxNavigate = headerSet{
		order: []string{"user-agent", "accept", "accept-language", "accept-encoding", "referer", "cookie",
			"upgrade-insecure-requests", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
			"priority", "te"},
		fixed: map[string]string{"accept": firefoxNavAccept, "upgrade-insecure-requests": "1", "sec-fetch-dest": "document",
			"sec-fetch-mode": "navigate", "sec-fetch-user": "?1", "priority": "u=0, i", "te": "trailers"},
		extraAfter: "te",
	}
	firefoxXHR = headerSet{
		order: []string{"user-agent", "accept", "accept-language", "accept-encoding", "referer", "origin", "cookie",
			"sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "priority", "te"},
		fixed: map[string]string{"accept": xhrAccept, "sec-fetch-dest": "empty", "sec-fetch-mode": "cors",
			"priority": "u=4", "te": "trailers"},
		extraAfter: "origin",
	}
)

// set is the header set of p's browser for kind.
func (p Profile) set(kind Kind) headerSet {
	firefox := firefoxUA.MatchString(p.UserAgent)
	switch {
	case firefox && kind == XHR:
		return firefoxXHR
	case firefox:
		return firefoxNavigate
	case kind == XHR:
		return chromeXHR
	}
	return chromeNavigate
}

// Headers are the headers p's browser sends for a request of kind to
// target from the page referer ("" for none): the names in the order
// the browser sends them, lower case, with its values. extra are the
// page's own headers (a site's x-requested-with, …) in the order its
// script sets them; a name the browser sends itself, or sends on some
// requests only (origin, on a POST to its own origin), takes the
// browser's place with the value given. Cookie is left to the cookie jar.
func (p Profile) Headers(kind Kind, target *url.URL, referer string, extra []HeaderField) []HeaderField {
	return slices.DeleteFunc(p.fields(kind, target, referer, extra), func(f HeaderField) bool { return f.Value == "" })
}

// fields are Headers with an empty cookie field where the browser sends
// its cookies.
func (p Profile) fields(kind Kind, target *url.URL, referer string, extra []HeaderField) []HeaderField {
	set := p.set(kind)
	values := p.values(set, kind, target, referer)
	var page []HeaderField
	for _, f := range extra {
		f.Name = strings.ToLower(f.Name)
		switch {
		case f.Value == "":
		case slices.Contains(set.order, f.Name): // the browser's own: in its place
			values[f.Name] = f.Value
		default:
			page = append(page, f)
		}
	}
	var own []HeaderField
	for _, name := range set.order {
		if v := values[name]; v != "" || name == "cookie" {
			own = append(own, HeaderField{Name: name, Value: v})
		}
	}
	return merge(own, page, set.extraAfter)
}

// HeaderField is one header as sent: the name lower case, the value.
type HeaderField struct {
	Name  string
	Value string
}

// values are the header values of set for a request of kind to target
// from referer.
func (p Profile) values(set headerSet, kind Kind, target *url.URL, referer string) map[string]string {
	v := map[string]string{
		"user-agent": p.UserAgent, "accept-language": p.AcceptLanguage,
		"sec-ch-ua": p.SecCHUA, "sec-ch-ua-mobile": p.SecCHUAMobile, "sec-ch-ua-platform": p.SecCHUAPlatform,
		"accept-encoding": BrowserAcceptEncoding,
	}
	for name, val := range set.fixed {
		v[name] = val
	}
	if kind == Navigate && p.Accept != "" {
		v["accept"] = p.Accept
	}
	from, _ := url.Parse(referer)
	if referer == "" || from == nil || from.Host == "" {
		v["sec-fetch-site"] = "none"
		if kind == XHR { // a script runs on a page: call it from the target's origin
			v["sec-fetch-site"] = "same-origin"
		}
		return v
	}
	v["sec-fetch-site"] = FetchSite(from, target)
	v["referer"] = RefererFor(from, target)
	if kind == XHR && v["sec-fetch-site"] != "same-origin" {
		v["origin"] = from.Scheme + "://" + from.Host
	}
	return v
}

// merge puts the page's headers among the browser's: after the header
// named after (at the end when it is not sent), or, when after is "",
// the way Chromium interleaves them with its own on HTTP/2.
func merge(own, page []HeaderField, after string) []HeaderField {
	if len(page) == 0 {
		return own
	}
	if after == "" {
		return chromiumInterleave(own, page)
	}
	i := len(own)
	for j := len(own) - 1; j >= 0; j-- {
		if own[j].Name == after {
			i = j + 1
			break
		}
	}
	if after == "origin" && i == len(own) { // no origin: after the referer, or accept-encoding
		i = afterAny(own, "referer", "accept-encoding")
	}
	return slices.Concat(own[:i], page, own[i:])
}

// afterAny is the index after the first of names found in fields
// (searched in the order given), len(fields) if none.
func afterAny(fields []HeaderField, names ...string) int {
	for _, n := range names {
		if i := slices.IndexFunc(fields, func(f HeaderField) bool { return f.Name == n }); i >= 0 {
			return i + 1
		}
	}
	return len(fields)
}

// FetchSite is the Sec-Fetch-Site of a request to target from the page
// from: same-origin, same-site (same scheme and registrable domain,
// approximated by the last two host labels) or cross-site.
func FetchSite(from, target *url.URL) string {
	switch {
	case from.Scheme == target.Scheme && from.Host == target.Host:
		return "same-origin"
	case from.Scheme == target.Scheme && siteOf(from.Hostname()) == siteOf(target.Hostname()):
		return "same-site"
	}
	return "cross-site"
}

// siteOf is host's last two labels ("www.wildberries.ru" →
// "wildberries.ru"); an IP address is its own site.
func siteOf(host string) string {
	labels := strings.Split(host, ".")
	if len(labels) <= 2 || strings.ContainsAny(host[len(host)-1:], "0123456789:]") {
		return host
	}
	return strings.Join(labels[len(labels)-2:], ".")
}

// RefererFor is the Referer the browsers' default policy
// (strict-origin-when-cross-origin) sends from the page from to target:
// the full URL without its fragment to the same origin, the origin to
// another, nothing from https to http.
func RefererFor(from, target *url.URL) string {
	if from.Scheme == "https" && target.Scheme == "http" {
		return ""
	}
	if from.Scheme == target.Scheme && from.Host == target.Host {
		u := *from
		u.Fragment, u.User = "", nil
		return u.String()
	}
	return from.Scheme + "://" + from.Host + "/"
}

// chromiumOrders are the orders, measured from chromium 156, in which it
// sends the headers before accept on a fetch() that adds the headers of
// the key's set: Chromium orders that group by a hash of the names, not by
// a rule, so only measured sets are known. Keyed by the sorted names.
// Without a page header it sends chromeXHR's own order
// (sec-ch-ua-platform, user-agent, sec-ch-ua, sec-ch-ua-mobile); with
// Wildberries' five search headers user-agent comes after
// sec-ch-ua-mobile (TestProfilesSendTheHeadersOfTheBrowserTheyClaim
// measures the sets crawlq sends).
var chromiumOrders = map[string][]string{
	"deviceid,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent": {
		"deviceid", "sec-ch-ua-platform", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile"},
	"deviceid,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent,x-queryid,x-requested-with": {
		"deviceid", "sec-ch-ua-platform", "x-requested-with", "user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "x-queryid"},
	"deviceid,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent,x-queryid,x-requested-with,x-spa-version,x-userid": {
		"sec-ch-ua-platform", "sec-ch-ua", "sec-ch-ua-mobile", "deviceid", "x-requested-with", "user-agent",
		"x-userid", "x-spa-version", "x-queryid"},
	// Wildberries' card and catalog APIs (measured 2026-12-05, issue 36.9).
	"deviceid,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent,x-requested-with,x-spa-version": {
		"deviceid", "sec-ch-ua-platform", "x-requested-with", "user-agent", "sec-ch-ua", "x-spa-version", "sec-ch-ua-mobile"},
	"deviceid,sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent,x-spa-version": {
		"deviceid", "sec-ch-ua-platform", "user-agent", "sec-ch-ua", "x-spa-version", "sec-ch-ua-mobile"},
	"sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,user-agent,x-requested-with,x-spa-version": {
		"sec-ch-ua-platform", "x-requested-with", "user-agent", "sec-ch-ua", "x-spa-version", "sec-ch-ua-mobile"},
}

// chromiumInterleave puts the page's headers among Chromium's own before
// accept in a measured order (chromiumOrders); a set not measured goes
// first, before Chromium's own.
func chromiumInterleave(own, page []HeaderField) []HeaderField {
	cut := slices.IndexFunc(own, func(f HeaderField) bool { return f.Name == "accept" })
	if cut < 0 {
		cut = len(own)
	}
	head := slices.Concat(page, own[:cut])
	names := make([]string, len(head))
	for i, f := range head {
		names[i] = f.Name
	}
	slices.Sort(names)
	if order, ok := chromiumOrders[strings.Join(names, ",")]; ok {
		slices.SortStableFunc(head, func(a, b HeaderField) int {
			return slices.Index(order, a.Name) - slices.Index(order, b.Name)
		})
	}
	return slices.Concat(head, own[cut:])
}
