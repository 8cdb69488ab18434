package tasks

import (
	"errors"
	"strings"
	"testing"
)

// TestHopURLOffSiteIsMasked: a stub naming another host is refused, and
// the refusal shows that host through the one masking rule: no password,
// no token in its path or query.
func TestHopURLOffSiteIsMasked(t *testing.T) {
	_, err := hopURL("https://www.avito.ru/moskva?q=x",
		"https://bob:Pr0xyPassw0rd@evil.example/next/9f8e7d6c5b4a39281706?key=Secr3tValue")
	if !errors.Is(err, errOffSite) {
		t.Fatalf("hopURL off site: %v, want errOffSite", err)
	}
	for _, secret := range []string{"Pr0xyPassw0rd", "9f8e7d6c5b4a39281706", "Secr3tValue"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the refusal %q shows %q", err, secret)
		}
	}
	if !strings.Contains(err.Error(), "evil.example") {
		t.Fatalf("the refusal %q does not name the host", err)
	}
	got, err := hopURL("https://www.avito.ru/moskva?q=x", "/moskva/kvartiry?p=2")
	if err != nil || got != "https://www.avito.ru/moskva/kvartiry?p=2" {
		t.Fatalf("hopURL same host = %q, %v", got, err)
	}
}
