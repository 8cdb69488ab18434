package testbed

import "time"

// Punishment is how a site answers a banned or misbehaving client.
type Punishment string

// Punishments, modelled on what the real sites do.
const (
	// TooMany429 answers 429 with Retry-After (seconds left of the ban).
	TooMany429 Punishment = "429"
	// Forbidden403 answers 403 with the site's block page.
	Forbidden403 Punishment = "403"
	// CaptchaPage200 answers 200 with an "access restricted" page
	// ("Доступ ограничен") that has no product markup.
	CaptchaPage200 Punishment = "captcha_page"
	// CaptchaRedirect answers 302 to /captcha?back=<path>.
	CaptchaRedirect Punishment = "captcha_redirect"
	// Placeholder answers 200 with a shrunken page: the page's frame with
	// no products (WB: "products": []).
	Placeholder Punishment = "placeholder"
	// BlockPage429 answers 429 with the site's block page and no
	// Retry-After: Avito's ban of an IP ("Доступ ограничен: проблема с
	// IP"), which waiting does not lift (avito-library
	// proxy_block_429_detector.py, 2025-10-29).
	BlockPage429 Punishment = "block_page_429"
	// BlockPage206 answers 206 with the site's block page (avito-library
	// proxy_block_403_detector.py: the page "even at 200/206").
	BlockPage206 Punishment = "block_page_206"
	// Status439 answers 439 with the site's block page (Duff89/parser_avito
	// counts 403/429/439 as blocks).
	Status439 Punishment = "439"
)

// Punishments lists every kind, for table tests.
var Punishments = []Punishment{TooMany429, Forbidden403, CaptchaPage200, CaptchaRedirect, Placeholder,
	BlockPage429, BlockPage206, Status439}

// SiteRules is one site's anti-bot configuration. The zero value has no
// rate rule; DefaultRules gives the per-site defaults.
type SiteRules struct {
	// MinInterval is the least time between two request starts from one IP;
	// a faster request is punished and bans the IP. 0 disables the rule.
	MinInterval time.Duration `json:"min_interval"`
	// Punishment is the answer to a banned or refused request. Default
	// TooMany429.
	Punishment Punishment `json:"punishment"`
	// BanFor is how long a ban lasts. Default one minute.
	BanFor time.Duration `json:"ban_for"`
	// Strict bans a too-fast IP for the rest of the run.
	Strict bool `json:"strict"`
	// SessionCheck refuses a session cookie presented from another IP than
	// the one it was issued to.
	SessionCheck bool `json:"session_check"`
	// CrossSite, when set, flags an IP seen on this site and another site
	// within this window: it is banned on both.
	CrossSite time.Duration `json:"cross_site"`
	// SoftBan, when set, makes the site soft-ban IPs (see SoftBan).
	SoftBan *SoftBan `json:"soft_ban,omitempty"`
	// Challenge, when set, puts a JavaScript challenge in front of the
	// site (see ChallengeRule).
	Challenge *ChallengeRule `json:"challenge,omitempty"`
	// Volume, when set, bans an IP that sends more than a volume of
	// requests within a window, however spaced (see VolumeRule). Off by
	// default.
	Volume *VolumeRule `json:"volume,omitempty"`
	// Upstreams, on Wildberries, publishes the basket CDN's upstream map
	// (see UpstreamsRule); nil: none is published (404).
	Upstreams *UpstreamsRule `json:"upstreams,omitempty"`
	// Incident, when set, answers some IPs with Ozon's real "Похоже, нет
	// соединения" incident page (see IncidentRule). Off by default.
	Incident *IncidentRule `json:"incident,omitempty"`
	// Hidden, when set, is a pace per IP crawlq is not told: faster is
	// answered 429, and an IP that keeps going is banned (HiddenGap).
	// Off by default.
	Hidden *HiddenGap `json:"hidden,omitempty"`
	// ProductShell, on Wildberries, answers the product page of some IPs
	// with its frame without the product (see ProductShellRule). Off by
	// default.
	ProductShell *ProductShellRule `json:"product_shell,omitempty"`
}

// DefaultBanFor is the ban length when SiteRules.BanFor is 0.
const DefaultBanFor = time.Minute

// DefaultRules are the rules each site gets unless Config.Sites overrides
// them: Wildberries 429s, Ozon 403s with its antibot page, Avito shows its
// "Доступ ограничен: проблема с IP" page with status 429, as the real site
// does.
func DefaultRules() map[string]SiteRules {
	return map[string]SiteRules{
		SiteWildberries: {MinInterval: 200 * time.Millisecond, Punishment: TooMany429, BanFor: DefaultBanFor, SessionCheck: true},
		SiteOzon:        {MinInterval: 500 * time.Millisecond, Punishment: Forbidden403, BanFor: DefaultBanFor, SessionCheck: true},
		SiteAvito:       {MinInterval: time.Second, Punishment: BlockPage429, BanFor: DefaultBanFor, SessionCheck: true},
	}
}

func (r SiteRules) withDefaults() SiteRules {
	if r.Hidden != nil {
		h := r.Hidden.withDefaults()
		r.Hidden = &h
	}
	if r.Punishment == "" {
		r.Punishment = TooMany429
	}
	if r.BanFor <= 0 {
		r.BanFor = DefaultBanFor
	}
	return r
}
