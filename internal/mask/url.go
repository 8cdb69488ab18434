package mask

import (
	"net/url"
	"regexp"
	"strings"
)

// stars replaces every hidden part.
const stars = "***"

// URL is raw safe to print. What it hides, whatever the scheme:
//   - the password, always; a user name given without a password is the
//     credential itself and is hidden whole; a user name with a password
//     shows as written (a gateway's {session} too), minus any word in it
//     that looks like a key;
//   - every query value, and a query part without "=";
//   - the fragment;
//   - in the path of anything but a Redis or PostgreSQL URL (whose path
//     names a database): every segment after the first, and the first
//     unless it is a plain word (letters and - _ .), a Telegram
//     bot<id>:<token> keeping bot<id>.
//
// A PostgreSQL key=value string shows with its password (and any *secret*
// or *token* value) hidden, user:pass@host:port shows as user:***@host:port,
// and anything else that is not a URL with a valid host or user info (and
// a scheme that does not look like a key) prints as ***.
func URL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return notURL(raw)
	}
	if !validScheme.MatchString(scheme) {
		return stars
	}
	auth, rest := authority(rest)
	rest, frag, hasFrag := strings.Cut(rest, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	host, path, hasPath := strings.Cut(rest, "/")
	if auth == "" && !validHosts(host) || words(scheme) != scheme {
		return stars
	}
	out := scheme + "://" + auth + host
	if hasPath {
		out += "/" + maskPath(scheme, path)
	}
	if hasQuery {
		out += "?" + maskQuery(query)
	}
	if hasFrag && frag != "" {
		out += "#" + stars
	}
	return out
}

// validScheme is a URL scheme (RFC 3986).
var validScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// authority splits the user info off rest at its last '@' (a password may
// hold '/', '?', '#' or '@' unescaped: hiding too much beats showing part
// of it) and returns it masked, with its '@', and what follows.
func authority(rest string) (string, string) {
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return "", rest
	}
	return userinfo(rest[:i]) + "@", rest[i+1:]
}

// userinfo is user:*** for user:pass, *** for a user name alone.
func userinfo(s string) string {
	user, pass, hasPass := strings.Cut(s, ":")
	if !hasPass || pass == "" {
		return stars
	}
	if u, err := url.PathUnescape(user); err == nil && !strings.ContainsAny(u, ":@/?# %\t\n\r") {
		user = u // as the user wrote it: {session}, not %7Bsession%7D
	}
	return words(user) + ":" + stars
}

// validHosts says s is host[:port][,host[:port]…] (several for Redis
// Sentinel and Cluster), so that without an '@' nothing else (such as
// host:port:user:pass) is printed as a host. After an '@' the credentials
// are behind, and a wrong host shows as written, for the error naming it.
var validHosts = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]*)(:[0-9]*)?(,(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:[0-9]*)?)*$`).MatchString

// databaseSchemes name a database in their path: it is shown.
var databaseSchemes = map[string]bool{
	"redis": true, "rediss": true, "redis-sentinel": true, "rediss-sentinel": true,
	"redis-cluster": true, "rediss-cluster": true, "postgres": true, "postgresql": true,
}

// maskPath hides every segment but a plain first one.
func maskPath(scheme, path string) string {
	if databaseSchemes[strings.ToLower(scheme)] {
		return path
	}
	segs := strings.Split(path, "/")
	segs[0] = firstSegment(segs[0])
	for i, s := range segs[1:] {
		if s != "" {
			segs[i+1] = stars
		}
	}
	return strings.Join(segs, "/")
}

// firstSegment shows a plain word (api, changeip, services) and a bot
// token's bot<id>; anything else is hidden.
func firstSegment(s string) string {
	if m := botToken.FindStringSubmatch(s); m != nil {
		return m[1] + ":" + stars
	}
	if s == "" || plainWord.MatchString(s) && words(s) == s {
		return s
	}
	return stars
}

var (
	// botToken is a Telegram bot API path segment, bot<id>:<token>.
	botToken = regexp.MustCompile(`^(bot[0-9]+):`)
	// plainWord is letters with - _ . between them, no digit.
	plainWord = regexp.MustCompile(`^[A-Za-z][A-Za-z._-]*$`)
)

// maskQuery keeps each parameter's name (unless it looks like a key) and
// hides its value; a part without "=" is a value.
func maskQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasEq := strings.Cut(p, "=")
		switch {
		case hasEq:
			parts[i] = words(k) + "=" + stars
		case p != "":
			parts[i] = stars
		}
	}
	return strings.Join(parts, "&")
}

// words is s with every word that looks like a key hidden. A word is a
// run of letters and digits; one that touches a %XX escape is hidden with
// the escapes around it, so that stars never cut an escape in two (the
// masked URL still parses) and never show more than before.
func words(s string) string {
	return escapedRun.ReplaceAllStringFunc(s, func(run string) string {
		for _, w := range word.FindAllString(run, -1) {
			if keyLike(w) {
				return stars
			}
		}
		return run
	})
}

var (
	// word is a run of letters and digits.
	word = regexp.MustCompile(`[A-Za-z0-9]+`)
	// escapedRun is a run of letters, digits and %XX escapes.
	escapedRun = regexp.MustCompile(`(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9])+`)
)

// keyLike says a word looks like a key or token: 16 characters or more
// (base64, long hex), or 8 or more mixing letters and digits (short hex,
// provider ids).
func keyLike(w string) bool {
	if len(w) >= 16 {
		return true
	}
	return len(w) >= 8 && strings.ContainsAny(w, "0123456789") && strings.IndexFunc(w, isLetter) >= 0
}

func isLetter(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }

// notURL masks a string without scheme://: a PostgreSQL key=value string,
// user:pass@host:port, a bare host[:port]; anything else is hidden.
func notURL(s string) string {
	switch {
	case s == "":
		return ""
	case strings.Contains(s, "="):
		return secretValue.ReplaceAllString(s, "$1="+stars)
	case strings.Contains(s, "@"):
		auth, host := authority(s)
		if validHosts(host) {
			return auth + host
		}
	case validHosts(s):
		return s
	}
	return stars
}

// secretValue is key=value whose key names a password, secret or token,
// the value bare or '…' quoted (PostgreSQL key=value form).
var secretValue = regexp.MustCompile(`(?i)\b([a-z_]*(?:pass|secret|token)[a-z_]*)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)
