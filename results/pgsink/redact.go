package pgsink

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
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

// MaskURL is a webhook URL with what may be a secret masked, for every
// message, log line and listing: a password (or a user name without
// one), every query value, a
// Telegram bot token (/bot123456:SECRET/ keeps bot123456), and any path
// segment of 16 characters or more (Slack's and Discord's webhook
// secrets). A URL that does not parse is masked whole.
func MaskURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "xxxxx"
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	} else if p.User != nil {
		p.User = url.User("xxxxx") // a user name alone is often a token
	}
	q := p.Query()
	for k := range q {
		q[k] = []string{"xxxxx"}
	}
	p.RawQuery = q.Encode()
	segs := strings.Split(p.Path, "/")
	for i, s := range segs {
		segs[i] = maskSegment(s)
	}
	p.Path, p.RawPath = strings.Join(segs, "/"), ""
	out, _ := url.PathUnescape(p.String())
	return out
}

// maskSegment masks a bot token's secret or a long segment.
func maskSegment(s string) string {
	if m := botToken.FindStringSubmatch(s); m != nil {
		return m[1] + ":xxxxx"
	}
	if len(s) >= 16 {
		return "xxxxx"
	}
	return s
}

// botToken is a Telegram bot API path segment, bot<id>:<secret>.
var botToken = regexp.MustCompile(`^(bot[0-9]+):.+$`)

// MaskIn is s with every occurrence of the webhook URL u (raw, or as Go
// quotes it in a *url.Error) replaced by MaskURL(u).
func MaskIn(s, u string) string {
	if u == "" {
		return s
	}
	return strings.ReplaceAll(s, u, MaskURL(u))
}

// checkWebhook refuses a webhook URL that is not http(s) with a host,
// saying what is wrong; the URL in the message is masked.
func checkWebhook(u string) error {
	if u == "" {
		return errors.New("webhook: required")
	}
	if u != strings.TrimSpace(u) {
		return fmt.Errorf("webhook %q: spaces around the URL", MaskURL(strings.TrimSpace(u)))
	}
	p, err := url.Parse(u)
	var ue *url.Error
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("webhook: not a URL: %v", ue.Err) // ue.Err names the wrong part, not the URL
	case err != nil:
		return errors.New("webhook: not a URL")
	case p.Scheme == "" && p.Host == "":
		return fmt.Errorf("webhook %q: no scheme, want http:// or https:// before it",
			strings.TrimPrefix(MaskURL("https://"+u), "https://"))
	case p.Scheme != "http" && p.Scheme != "https":
		return fmt.Errorf("webhook %q: scheme %q, want http or https", MaskURL(u), maskSegment(p.Scheme))
	case p.Host == "":
		return fmt.Errorf("webhook %q: no host after %s://", MaskURL(u), p.Scheme)
	}
	return nil
}
