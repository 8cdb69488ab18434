package testbed

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// proxyBasicAuth reads Proxy-Authorization: Basic.
func proxyBasicAuth(req *http.Request) (user, pass string, ok bool) {
	enc, ok := strings.CutPrefix(req.Header.Get("Proxy-Authorization"), "Basic ")
	if !ok {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// ParseGatewayUser splits a gateway username into the customer's base
// username, the session id and the session's lifetime (0: the
// gateway's default). It reads the spellings of the large providers:
//
//	brd-customer-C-zone-Z-session-ID            (-session-)
//	customer-U-cc-DE-sessid-ID-sesstime-10      (-sessid-, minutes)
//	user_session-ID_lifetime-10m                (_session-, a duration)
//
// A username without a session id is the base itself.
func ParseGatewayUser(user string) (base, id string, ttl time.Duration) {
	for _, mark := range []string{"-session-", "-sessid-", "_session-"} {
		before, after, found := strings.Cut(user, mark)
		if !found {
			continue
		}
		id, rest := splitSessionID(after)
		rest, ttl = cutLifetime(rest)
		return before + rest, id, ttl
	}
	return user, "", 0
}

// splitSessionID takes the session id (letters and digits) off the front
// of s.
func splitSessionID(s string) (id, rest string) {
	i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// cutLifetime removes a "-sesstime-MINUTES" or "_lifetime-DURATION"
// parameter from rest and returns its value.
func cutLifetime(rest string) (string, time.Duration) {
	if v, ok := strings.CutPrefix(rest, "-sesstime-"); ok {
		n, tail := splitSessionID(v)
		if m, err := strconv.Atoi(n); err == nil {
			return tail, time.Duration(m) * time.Minute
		}
	}
	if v, ok := strings.CutPrefix(rest, "_lifetime-"); ok {
		n, tail, _ := strings.Cut(v, "_")
		if d, err := time.ParseDuration(n); err == nil {
			if tail != "" {
				tail = "_" + tail
			}
			return tail, d
		}
	}
	return rest, 0
}
