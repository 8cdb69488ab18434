package site

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuery is the longest search query accepted, in runes.
const MaxQuery = 200

// CheckListing validates the common fields of a listing request: a
// non-empty query of at most MaxQuery runes (unless queryOptional) and a
// page ≥ 1. It returns r with the query trimmed.
func CheckListing(s *Site, kind string, r Request, queryOptional bool) (Request, error) {
	bad := func(field, reason string) error {
		return &RequestError{Site: s.Name, Kind: kind, Field: field, Reason: reason}
	}
	r.Query = Clean(r.Query)
	switch {
	case r.Query == "" && !queryOptional:
		return r, bad("query", "empty")
	case utf8.RuneCountInString(r.Query) > MaxQuery:
		return r, bad("query", "longer than "+strconv.Itoa(MaxQuery)+" characters")
	case r.Page < 1:
		return r, bad("page", "must be 1 or more, got "+strconv.Itoa(r.Page))
	}
	return r, nil
}

var digitsRe = regexp.MustCompile(`^[0-9]{1,20}$`)

// CheckID validates a numeric ID.
func CheckID(s *Site, kind, id string) (string, error) {
	id = strings.TrimSpace(id)
	if !digitsRe.MatchString(id) {
		return "", &RequestError{Site: s.Name, Kind: kind, Field: "id",
			Reason: "want a numeric ID, got " + strconv.Quote(id)}
	}
	return id, nil
}

// ParseURL parses a pasted absolute URL (the scheme may be missing:
// "www.ozon.ru/product/…") or a path on the site's web endpoint ("/…",
// the canonical form Normalize stores, so normalizing twice is the same).
func ParseURL(s *Site, kind, raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//"):
		raw = s.Endpoint(EndpointWeb) + raw
	case !strings.Contains(raw, "://"):
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, &RequestError{Site: s.Name, Kind: kind, Field: "url", Reason: "not a URL: " + strconv.Quote(raw)}
	}
	return u, nil
}
