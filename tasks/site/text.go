package site

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Clean collapses every run of white space (NBSP and thin spaces included)
// into one space and trims the ends.
func Clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Kopecks parses a ruble amount as shown on a page ("924 ₽", "2 099 ₽",
// "1 234,50 ₽", "27000") into integer kopecks. ok is false when s holds
// no digits.
func Kopecks(s string) (k int64, ok bool) {
	var rub, kop strings.Builder
	cur := &rub
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			cur.WriteRune(r)
		case (r == ',' || r == '.') && cur == &rub && rub.Len() > 0:
			cur = &kop
		}
	}
	if rub.Len() == 0 || rub.Len() > 15 {
		return 0, false
	}
	n, _ := strconv.ParseInt(rub.String(), 10, 64)
	k = n * 100
	if f := kop.String(); f != "" {
		f = (f + "0")[:2]
		c, _ := strconv.ParseInt(f, 10, 64)
		k += c
	}
	return k, true
}

// Count returns the first integer in s with its digit-group spaces
// removed: "21 358 оценок" → 21358. ok is false without digits.
func Count(s string) (int, bool) {
	var b strings.Builder
	started := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
			started = true
		case started && unicode.IsSpace(r):
		case started:
			return atoi(b.String())
		}
	}
	return atoi(b.String())
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 12 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

var ratingRe = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

// Rating parses "4,9", "4.9  " or "4.9 • 32 582 отзыва" into 4.9; ok is
// false without a number in 0–5.
func Rating(s string) (float64, bool) {
	m := ratingRe.FindString(s)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", "."), 64)
	if err != nil || f < 0 || f > 5 {
		return 0, false
	}
	return f, true
}

// Resolve makes href absolute against base (a page URL or a site base URL)
// and drops its query and fragment when strip is true. It returns "" for
// an unparsable href.
func Resolve(base, href string, strip bool) string {
	h, err := url.Parse(strings.TrimSpace(href))
	if err != nil || href == "" {
		return ""
	}
	if b, err := url.Parse(base); err == nil && base != "" {
		h = b.ResolveReference(h)
	}
	if strip {
		h.RawQuery, h.Fragment = "", ""
	}
	return h.String()
}

// Origin returns scheme://host of a URL, or "" if it has none.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Availability reads a schema.org offer availability ("http://schema.org/InStock",
// "https://schema.org/OutOfStock", "InStock") as whether the item can be
// bought now: InStock, LimitedAvailability, OnlineOnly and InStoreOnly
// are true; OutOfStock, SoldOut and Discontinued false. Anything else
// (PreOrder, BackOrder, an empty or unknown value) is nil: the page does
// not say.
func Availability(s string) *bool {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	var in bool
	switch strings.ToLower(s) {
	case "instock", "limitedavailability", "onlineonly", "instoreonly":
		in = true
	case "outofstock", "soldout", "discontinued":
		in = false
	default:
		return nil
	}
	return &in
}
