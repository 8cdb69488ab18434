package site

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"crawlq/internal/yamlstrict"
	"crawlq/proxies"
)

// Config overrides site defaults; it is the `sites:` section of crawlq's
// YAML configuration and may be inlined in a larger config struct:
//
//	sites:
//	  wildberries:
//	    base_url: http://127.0.0.1:8081   # every endpoint at one host
//	    min_interval: 500ms
//	    class: datacenter
//	    queue: wildberries
//	  avito:
//	    endpoints: {web: https://m.avito.ru}
type Config struct {
	Sites map[string]SiteConfig `yaml:"sites"`
}

// SiteConfig overrides one site; an empty field keeps the default.
type SiteConfig struct {
	// BaseURL points every endpoint of the site at one http(s) host.
	BaseURL string `yaml:"base_url"`
	// MinInterval is a Go duration such as "500ms" or "2s", or "auto"
	// (learned per class, within 100ms..5s), or "auto MIN..MAX" with
	// bounds such as "auto 250ms..3s" (either side may be left out).
	MinInterval string `yaml:"min_interval"`
	// Class is datacenter, residential or mobile.
	Class string `yaml:"class"`
	// RotateAfter is a number of requests, RotateEvery a Go duration: a
	// modem changes its IP after that many requests from one IP to the
	// site, or that long after its first (a site that bans by volume).
	// RotateAfter "auto" (BudgetAuto) learns the number from the bans.
	RotateAfter Budget `yaml:"rotate_after"`
	RotateEvery string `yaml:"rotate_every"`
	// Queue is the Asynq queue name.
	Queue string `yaml:"queue"`
	// Endpoints overrides single endpoints by name (web, search, card,
	// catalog).
	Endpoints map[string]string `yaml:"endpoints"`
	// TLS adds a CA to trust for this site's https endpoints.
	TLS TLSConfig `yaml:"tls"`
	// Fetch is http, browser or auto (the default): see Site.Fetch.
	Fetch string `yaml:"fetch"`
	// API selects a generation of the site's APIs (Wildberries: current
	// or legacy); endpoints given beside it override its hosts.
	API string `yaml:"api"`
	// Challenge overrides how the site's JavaScript challenge is cleared.
	Challenge *ChallengeConfig `yaml:"challenge"`
	// XHRPaths replaces the URL path prefixes of the site's API calls.
	XHRPaths []string `yaml:"xhr_paths"`
	// XHRHeaders replaces the headers the site's script adds to its API
	// calls, in order (a list of {name, value}; an empty list sends none).
	XHRHeaders *[]Header `yaml:"xhr_headers"`
}

// ChallengeConfig is a site's `challenge:` section (see site.Challenge).
type ChallengeConfig struct {
	// Page is the path the browser opens to clear a challenge; "" keeps
	// the site's default.
	Page string `yaml:"page"`
	// Cookie is the clearance cookie's name; "" keeps the default.
	Cookie string `yaml:"cookie"`
	// Wait is a Go duration: how long a lease waits for a proxy that holds
	// the site's clearance (see Challenge.Wait); "" keeps the default
	// (none).
	Wait string `yaml:"wait"`
}

// TLSConfig is a `tls:` section, global or under a site.
type TLSConfig struct {
	// CAFile is a PEM file of CA certificates trusted besides the system
	// roots (a test CA, a corporate TLS proxy); relative paths are from the
	// config file. Certificates are always verified.
	CAFile string `yaml:"ca_file"`
}

// LoadConfig decodes YAML holding a `sites:` section strictly: an unknown
// key names its line, its place and the field it was likely meant to be.
func LoadConfig(data []byte) (Config, error) {
	var cfg Config
	if err := yamlstrict.Decode(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("sites config: %w", err)
	}
	return cfg, nil
}

// Apply overrides the registry's sites from cfg. It checks every value
// first; on error (a *ConfigError naming the field) nothing changes.
func (r *Registry) Apply(cfg Config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := map[string]*Site{}
	for _, name := range sortedKeys(cfg.Sites) {
		s, ok := r.sites[name]
		if !ok {
			return &ConfigError{Field: "sites." + name,
				Reason: unknownSite(name, sortedKeys(r.sites))}
		}
		c, err := applySite(s.clone(), cfg.Sites[name])
		if err != nil {
			return err
		}
		next[name] = c
	}
	for name, s := range next {
		r.sites[name] = s
	}
	return nil
}

func applySite(s *Site, c SiteConfig) (*Site, error) {
	field := func(f string) string { return "sites." + s.Name + "." + f }
	if c.BaseURL != "" {
		u, err := checkBase(c.BaseURL)
		if err != nil {
			return nil, &ConfigError{Field: field("base_url"), Reason: err.Error()}
		}
		s.BaseURL = u
	}
	if err := applyFetch(s, c, field); err != nil {
		return nil, err
	}
	if err := applyEndpoints(s, c.Endpoints, field("endpoints")); err != nil {
		return nil, err
	}
	if err := applyXHR(s, c, field); err != nil {
		return nil, err
	}
	if err := applyMinInterval(s, c.MinInterval, field("min_interval")); err != nil {
		return nil, err
	}
	if err := applyRotate(s, c, field); err != nil {
		return nil, err
	}
	if err := applyClassQueue(s, c, field); err != nil {
		return nil, err
	}
	return s, nil
}

// applyClassQueue applies class and queue.
func applyClassQueue(s *Site, c SiteConfig, field func(string) string) error {
	if c.Class != "" {
		cl, err := proxies.ParseClass(c.Class)
		if err != nil {
			return &ConfigError{Field: field("class"), Reason: err.Error()}
		}
		s.Class = cl
	}
	if c.Queue != "" {
		q := strings.TrimSpace(c.Queue)
		if q == "" || strings.ContainsAny(q, " \t\r\n") {
			return &ConfigError{Field: field("queue"), Reason: fmt.Sprintf("%q is not a queue name", c.Queue)}
		}
		s.Queue = q
	}
	return nil
}

// applyRotate applies rotate_after and rotate_every.
func applyRotate(s *Site, c SiteConfig, field func(string) string) error {
	switch {
	case c.RotateAfter == BudgetAuto:
		s.RotateAfterAuto = true
	case c.RotateAfter < 0:
		return &ConfigError{Field: field("rotate_after"), Reason: fmt.Sprintf("%d: want a number of requests, 0 or more, or auto", c.RotateAfter)}
	case c.RotateAfter > 0:
		s.RotateAfter = int(c.RotateAfter)
	}
	if c.RotateEvery != "" {
		d, err := time.ParseDuration(strings.TrimSpace(c.RotateEvery))
		if err != nil || d < 0 {
			return &ConfigError{Field: field("rotate_every"),
				Reason: fmt.Sprintf("%q is not a non-negative duration such as 10m", c.RotateEvery)}
		}
		s.RotateEvery = d
	}
	return nil
}

// applyFetch applies fetch, api and challenge.
func applyFetch(s *Site, c SiteConfig, field func(string) string) error {
	switch f := strings.TrimSpace(c.Fetch); f {
	case "":
	case FetchAuto, FetchHTTP, FetchBrowser:
		s.Fetch = f
	default:
		return &ConfigError{Field: field("fetch"), Reason: fmt.Sprintf("%q: want http, browser or auto", c.Fetch)}
	}
	if c.API != "" {
		eps, ok := s.APIs[c.API]
		if !ok {
			return &ConfigError{Field: field("api"), Reason: fmt.Sprintf("unknown API %q (known: %s)", c.API, strings.Join(sortedKeys(s.APIs), ", "))}
		}
		s.API = c.API
		for name, u := range eps {
			s.Endpoints[name] = u
		}
	}
	if ch := c.Challenge; ch != nil {
		if ch.Page != "" && !strings.HasPrefix(ch.Page, "/") {
			return &ConfigError{Field: field("challenge.page"), Reason: fmt.Sprintf("%q: want a path starting with /", ch.Page)}
		}
		if ch.Page != "" {
			s.Challenge.Page = ch.Page
		}
		if ch.Cookie != "" {
			s.Challenge.Cookie = ch.Cookie
		}
		if ch.Wait != "" {
			d, err := time.ParseDuration(strings.TrimSpace(ch.Wait))
			if err != nil || d < 0 {
				return &ConfigError{Field: field("challenge.wait"),
					Reason: fmt.Sprintf("%q is not a non-negative duration such as 2s", ch.Wait)}
			}
			s.Challenge.Wait = d
		}
	}
	return nil
}

func applyEndpoints(s *Site, eps map[string]string, field string) error {
	for _, name := range sortedKeys(eps) {
		if _, ok := s.Endpoints[name]; !ok {
			return &ConfigError{Field: field + "." + name,
				Reason: fmt.Sprintf("unknown endpoint (known: %s)", strings.Join(sortedKeys(s.Endpoints), ", "))}
		}
		u, err := checkBase(eps[name])
		if err != nil {
			return &ConfigError{Field: field + "." + name, Reason: err.Error()}
		}
		s.Endpoints[name] = u
	}
	return nil
}

// checkBase accepts an absolute http(s) URL without query or fragment and
// returns it without a trailing slash.
func checkBase(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", fmt.Errorf("%q is not a URL: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: want an http:// or https:// URL", raw)
	case u.Host == "":
		return "", fmt.Errorf("%q has no host", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("%q: a base URL takes no query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// unknownSite says a configured site is none of known, suggesting the
// closest when it looks like a typo.
func unknownSite(name string, known []string) string {
	if s := yamlstrict.Suggest(name, known); s != "" {
		return fmt.Sprintf("unknown site (did you mean %s?)", s)
	}
	return fmt.Sprintf("unknown site (known: %s)", strings.Join(known, ", "))
}

// Budget is a number of requests in a site's configuration, or "auto"
// (BudgetAuto): learned by crawlq.
type Budget int

// BudgetAuto is "auto".
const BudgetAuto Budget = -1

// UnmarshalYAML reads a number or "auto".
func (c *Budget) UnmarshalYAML(n *yaml.Node) error {
	if strings.TrimSpace(n.Value) == "auto" {
		*c = BudgetAuto
		return nil
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("line %d: %q: want a number of requests or auto", n.Line, n.Value)
	}
	*c = Budget(v)
	return nil
}

// applyMinInterval applies min_interval: a duration, or auto with
// optional bounds.
func applyMinInterval(s *Site, v, field string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(v, "auto"); ok {
		l, err := parseAuto(strings.TrimSpace(rest))
		if err != nil {
			return &ConfigError{Field: field, Reason: fmt.Sprintf("%q: %v", v, err)}
		}
		s.Learn = &l
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return &ConfigError{Field: field,
			Reason: fmt.Sprintf("%q is not a non-negative duration such as 500ms, or auto", v)}
	}
	s.MinInterval, s.Learn = d, nil
	return nil
}

// parseAuto reads the bounds after "auto": "", "MIN..MAX", "MIN.." or
// "..MAX".
func parseAuto(b string) (proxies.PaceLearning, error) {
	var l proxies.PaceLearning
	if b == "" {
		return l.Filled(), nil
	}
	lo, hi, ok := strings.Cut(b, "..")
	if !ok {
		return l, fmt.Errorf("want auto, or auto MIN..MAX such as auto 250ms..3s")
	}
	for _, x := range []struct {
		s string
		d *time.Duration
	}{{lo, &l.Min}, {hi, &l.Max}} {
		if x.s = strings.TrimSpace(x.s); x.s == "" {
			continue
		}
		d, err := time.ParseDuration(x.s)
		if err != nil || d <= 0 {
			return l, fmt.Errorf("bound %q is not a positive duration", x.s)
		}
		*x.d = d
	}
	if l.Min > 0 && l.Max > 0 && l.Min > l.Max {
		return l, fmt.Errorf("min %s over max %s", l.Min, l.Max)
	}
	return l.Filled(), nil
}
