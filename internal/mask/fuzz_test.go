package mask

import (
	"strings"
	"testing"
)

// FuzzURL builds URLs with a secret as the password, a path segment after
// the first (but in a Redis or PostgreSQL URL, whose path is shown), a
// query value or the fragment, and checks that what URL prints does not
// depend on the secret (its letters and digits changed print the same),
// whatever the other parts hold, and that masking twice changes nothing.
// The host and first segment hold no / ? # @ (they would not be what they
// are), outside the user info no part holds an '@' (the last one ends the
// user info, hiding too much rather than part of a password), and the secret
// holds nothing that would end its part: ? or # in a path segment, & in a
// query value.
func FuzzURL(f *testing.F) {
	f.Add(uint8(0), "http", "user", "S3cretPW", "10.0.0.1:8080", "api")
	f.Add(uint8(1), "https", "", "k3y", "modem.example", "changeip")
	f.Add(uint8(2), "redis", "app", "p@ss/w#rd", "h:6379", "0")
	f.Add(uint8(3), "https", "u", "Fr4g", "hooks.example", "bot1:x")
	f.Fuzz(func(t *testing.T, where uint8, scheme, user, secret, host, first string) {
		where %= 4
		if secret == "" || where != 0 && strings.Contains(secret, "@") || strings.ContainsAny(host+first, "/?#@") ||
			where == 1 && strings.ContainsAny(secret, "?#") || where == 2 && strings.Contains(secret, "&") ||
			where == 1 && databaseSchemes[strings.ToLower(scheme)] {
			return
		}
		build := func(secret string) string {
			switch where {
			case 0:
				return scheme + "://" + user + ":" + secret + "@" + host + "/" + first
			case 1:
				return scheme + "://" + host + "/" + first + "/" + secret
			case 2:
				return scheme + "://" + host + "/" + first + "?key=" + secret
			}
			return scheme + "://" + host + "/" + first + "#" + secret
		}
		other := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' || isLetter(r) {
				return 'x'
			}
			return r
		}, secret)
		got := URL(build(secret))
		if o := URL(build(other)); got != o {
			t.Fatalf("URL(%q) = %q but URL(%q) = %q: the output shows the secret %q", build(secret), got, build(other), o, secret)
		}
		if again := URL(got); again != got {
			t.Fatalf("URL(URL(%q)) = %q, want %q", build(secret), again, got)
		}
	})
}
