package fetcher

import (
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// DefaultAcceptLanguage is the Russian-first Accept-Language of the
// profiles: what chromium 156 and firefox-esr 153 both send for the
// languages ru-RU, ru, en-US, en.
const DefaultAcceptLanguage = "ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7"

// Accept headers of a top-level page load.
const (
	chromeAccept  = chromeNavAccept
	firefoxAccept = firefoxNavAccept
)

// sec-ch-ua of Chrome and Chromium 156: Chromium's GREASE brand for
// version 156 ("Not:A-Brand";v="8") in its order for that version, as
// chromium 156 sends it (fetcher/headers_test.go).
const (
	chrome156CHUA   = `"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"`
	chromium156CHUA = `"Not:A-Brand";v="8", "Chromium";v="156"`
)

// Profile is the browser a session claims to be: the headers every one of
// its requests carries and, through TLS, the ClientHello and HTTP/2
// settings of that browser version. Keep one per session so a user never
// changes browsers between pages.
type Profile struct {
	Name string `json:"name"`
	// TLS names the Fingerprint its https requests go out with
	// (TLSChrome156, TLSFirefox153, TLSGo); it must be the fingerprint of
	// the browser and version UserAgent claims. Empty: the built-in
	// fingerprint of the UA's browser family (see Fingerprint).
	TLS            string `json:"tls,omitempty"`
	UserAgent      string `json:"user_agent"`
	Accept         string `json:"accept"`
	AcceptLanguage string `json:"accept_language"`
	// SecCHUA, SecCHUAMobile and SecCHUAPlatform are Chrome's client hints;
	// empty for Firefox, which sends none.
	SecCHUA         string `json:"sec_ch_ua,omitempty"`
	SecCHUAMobile   string `json:"sec_ch_ua_mobile,omitempty"`
	SecCHUAPlatform string `json:"sec_ch_ua_platform,omitempty"`
}

// IsZero reports whether p is the empty profile.
func (p Profile) IsZero() bool { return p == Profile{} }

// Apply sets the headers p's browser sends on a typed navigation on h,
// leaving headers h already has.
func (p Profile) Apply(h http.Header) {
	for _, f := range p.Headers(Navigate, &url.URL{Scheme: "https"}, "", nil) {
		if h.Get(f.Name) == "" {
			h.Set(f.Name, f.Value)
		}
	}
}

// Fingerprint is the name of the TLS fingerprint p's requests use: p.TLS,
// or when empty the one of the browser and major version the UA claims
// ("chrome-156" for Chrome/156.x, "firefox-153" for Firefox/153.x), else
// TLSGo. A UA never gets another browser's or version's ClientHello: an
// https request whose fingerprint is not built in fails with
// ErrUnknownFingerprint.
func (p Profile) Fingerprint() string {
	if p.TLS != "" {
		return p.TLS
	}
	if m := firefoxUA.FindStringSubmatch(p.UserAgent); m != nil {
		return "firefox-" + m[1]
	}
	if m := chromeUA.FindStringSubmatch(p.UserAgent); m != nil {
		return "chrome-" + m[1]
	}
	return TLSGo
}

var (
	firefoxUA = regexp.MustCompile(`Firefox/(\d+)`)
	chromeUA  = regexp.MustCompile(`Chrome/(\d+)`)
)

// profiles are realistic desktop browsers, each with the TLS and HTTP/2
// fingerprint of the version its User-Agent claims; the first is the
// default. Keep UA versions in step with the fingerprints.
var profiles = []Profile{
	chrome("chrome-156-windows", "Windows NT 10.0; Win64; x64", `"Windows"`, "156", chrome156CHUA),
	chrome("chrome-156-macos", "Macintosh; Intel Mac OS X 10_15_7", `"macOS"`, "156", chrome156CHUA),
	chrome("chromium-156-linux", "X11; Linux x86_64", `"Linux"`, "156", chromium156CHUA),
	firefox("firefox-153-windows", "Windows NT 10.0; Win64; x64; rv:153.0", "153.0"),
	firefox("firefox-153-linux", "X11; Linux x86_64; rv:153.0", "153.0"),
}

func chrome(name, platform, chPlatform, major, chUA string) Profile {
	return Profile{
		Name:            name,
		TLS:             "chrome-" + major,
		UserAgent:       "Mozilla/5.0 (" + platform + ") AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + major + ".0.0.0 Safari/537.36",
		Accept:          chromeAccept,
		AcceptLanguage:  DefaultAcceptLanguage,
		SecCHUA:         chUA,
		SecCHUAMobile:   "?0",
		SecCHUAPlatform: chPlatform,
	}
}

func firefox(name, platform, version string) Profile {
	return Profile{
		Name:           name,
		TLS:            "firefox-" + strings.TrimSuffix(version, ".0"),
		UserAgent:      "Mozilla/5.0 (" + platform + ") Gecko/20100101 Firefox/" + version,
		Accept:         firefoxAccept,
		AcceptLanguage: DefaultAcceptLanguage,
	}
}

// ProfileByName returns the built-in profile called name.
func ProfileByName(name string) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Profiles lists the built-in profiles (a copy).
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// DefaultProfile is the profile of a Request that names none.
func DefaultProfile() Profile { return profiles[0] }

// RandomProfile picks a built-in profile with rng.
func RandomProfile(rng *rand.Rand) Profile { return profiles[rng.IntN(len(profiles))] }

// ProfileFor picks a built-in profile by seed (a session or task ID): the
// same seed always gets the same profile, on every server.
func ProfileFor(seed string) Profile {
	h := fnv.New64a()
	h.Write([]byte(seed))
	return profiles[h.Sum64()%uint64(len(profiles))]
}
