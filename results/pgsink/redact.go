package pgsink

import (
	"net/url"
	"regexp"
)

// Redact is a postgres URL with its password masked, for messages.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return passwordKV.ReplaceAllString(u, "password=xxxxx")
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	q := p.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// passwordKV finds password=… in a keyword/value connection string.
var passwordKV = regexp.MustCompile(`password=\S*`)
