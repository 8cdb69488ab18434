package fetcher_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"

	"crawlq/fetcher"
)

func TestProfileForIsStablePerSeed(t *testing.T) {
	seen := map[string]bool{}
	for i := range 50 {
		seed := "task-" + strings.Repeat("x", i)
		a, b := fetcher.ProfileFor(seed), fetcher.ProfileFor(seed)
		if a != b {
			t.Fatalf("ProfileFor(%q) changed: %q then %q", seed, a.Name, b.Name)
		}
		seen[a.Name] = true
	}
	if len(seen) < 2 {
		t.Errorf("50 seeds all got one profile %v", seen)
	}
}

func TestBuiltInProfilesAreConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := fetcher.Profiles()
	if !slices.Contains(all, fetcher.RandomProfile(rng)) {
		t.Error("RandomProfile returned a profile outside the list")
	}
	for _, p := range all {
		t.Run(p.Name, func(t *testing.T) {
			chrome := strings.Contains(p.UserAgent, "Chrome/")
			if chrome != (p.SecCHUA != "") {
				t.Errorf("client hints %q do not match user agent %q", p.SecCHUA, p.UserAgent)
			}
			if !strings.HasPrefix(p.AcceptLanguage, "ru-RU,ru;") || p.Accept == "" {
				t.Errorf("accept %q, language %q", p.Accept, p.AcceptLanguage)
			}
		})
	}
}

func TestUnknownFingerprintIsNeverSentAsGoTLS(t *testing.T) {
	f := fetcher.New(fetcher.Config{})
	defer f.Close()
	p := fetcher.DefaultProfile()
	p.TLS = "chrome-999"
	_, err := f.Do(context.Background(), fetcher.Request{URL: "https://127.0.0.1:1/", Profile: p})
	if !errors.Is(err, fetcher.ErrUnknownFingerprint) {
		t.Errorf("Do with fingerprint %q: %v, want ErrUnknownFingerprint", p.TLS, err)
	}
}

func TestEveryProfileClaimsTheBrowserOfItsFingerprint(t *testing.T) {
	for _, p := range fetcher.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			if _, ok := fetcher.FingerprintByName(p.TLS); !ok {
				t.Fatalf("fingerprint %q is not built in", p.TLS)
			}
			family, version, _ := strings.Cut(p.TLS, "-")
			claim := map[string]string{"chrome": "Chrome/", "firefox": "Firefox/"}[family] + version + "."
			if !strings.Contains(p.UserAgent, claim) {
				t.Errorf("user agent %q does not claim %s, the browser of fingerprint %s", p.UserAgent, claim, p.TLS)
			}
		})
	}
}

func TestFingerprintFollowsTheUserAgentsVersion(t *testing.T) {
	tests := []struct {
		name string
		p    fetcher.Profile
		want string
	}{
		{name: "named", p: fetcher.Profile{TLS: fetcher.TLSFirefox153, UserAgent: "Firefox/153.0"}, want: fetcher.TLSFirefox153},
		{name: "chrome ua", p: fetcher.Profile{UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"}, want: fetcher.TLSChrome156},
		{name: "firefox ua", p: fetcher.Profile{UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"}, want: fetcher.TLSFirefox153},
		{name: "older chrome has no fingerprint", p: fetcher.Profile{UserAgent: "Chrome/120.0.0.0"}, want: "chrome-120"},
		{name: "no browser", p: fetcher.Profile{UserAgent: "curl/8.5"}, want: fetcher.TLSGo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Fingerprint(); got != tc.want {
				t.Errorf("Fingerprint() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOriginOfAPostGoesWhereTheBrowserPutsIt: a script's POST to its own
// origin carries Origin (both browsers send it on a POST); given as the
// page's header it takes the browser's place (Chromium: after accept;
// Firefox: after referer), while the page's content-type stays a page
// header.
func TestOriginOfAPostGoesWhereTheBrowserPutsIt(t *testing.T) {
	target, _ := url.Parse("https://www.avito.ru/web/3/firewallPow/get")
	extra := []fetcher.HeaderField{{Name: "Content-Type", Value: "application/json"}, {Name: "Origin", Value: "https://www.avito.ru"}}
	for name, after := range map[string]string{"chromium-156-linux": "accept", "firefox-153-linux": "referer"} {
		p, _ := fetcher.ProfileByName(name)
		h := p.Headers(fetcher.XHR, target, "https://www.avito.ru/moskva", extra)
		var names []string
		for _, f := range h {
			names = append(names, f.Name)
		}
		i := slices.Index(names, "origin")
		if i < 1 || names[i-1] != after || !slices.Contains(names, "content-type") {
			t.Errorf("%s: headers %v; want origin right after %s, and content-type sent", name, names, after)
		}
	}
}
