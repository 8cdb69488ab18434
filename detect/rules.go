package detect

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Rules are the detection rules of every site. The rule for (site, kind)
// is Default, then the site's Default, then the site's kind rule, each laid
// over the one before (see Rule.Merge).
type Rules struct {
	// Default applies to every site, including sites without rules.
	Default Rule
	// Sites maps a site name ("wildberries") to its rules.
	Sites map[string]Site
}

// Site holds one site's rules.
type Site struct {
	// Default applies to every page kind of the site.
	Default Rule
	// Kinds maps a page kind ("search", "product") to its rule. The kind
	// "item" is stored as "product".
	Kinds map[string]Rule
}

// Rule is one layer of detection rules. Lists extend the layer below;
// non-zero scalars override it. Replace makes the layer stand alone.
type Rule struct {
	// Replace drops everything this rule is laid over: the built-in rule at
	// the same place and the layers it would inherit.
	Replace bool
	// BlockStatus: statuses judged Blocked ("status 403").
	BlockStatus []int
	// RateLimitStatus: statuses judged RateLimited, with Retry-After.
	RateLimitStatus []int
	// DefectStatus: statuses judged RequestDefect: the site refuses the
	// request as sent (Wildberries' 403 to a call without the headers its
	// page sends), not the IP; checked before BlockStatus. A body with a
	// block marker at such a status is still Blocked.
	DefectStatus []int
	// ChallengeStatus: statuses judged Challenge (Wildberries' 498: the
	// x_wbaas_token cookie is missing or no longer valid).
	ChallengeStatus []int
	// ChallengeMarkers: byte strings whose presence in a body of any
	// status means a JavaScript challenge page (Ozon's "fab_chlg_"
	// incident). Checked before the block rules: a challenge page often
	// carries a block page's words too.
	ChallengeMarkers []string
	// ChallengeFirstMarkers: byte strings of a page (any status) that is
	// a challenge first and a ban only if the browser cannot pass it:
	// Ozon's "Похоже, нет соединения" incident page carries a challenge
	// incident id and an inline script, and datacenter IPs get it as a
	// block. Judged Challenge with IfUnsolved Blocked: the browser gets
	// one visit through the same IP, and a visit that ends on the same
	// page is the ban (without a browser to try, it is Blocked at once).
	// Checked after ChallengeMarkers.
	ChallengeFirstMarkers []string
	// URLPatterns: regexps on the final URL (and a 3xx Location) that mean
	// a captcha or login page.
	URLPatterns []string
	// Markers: byte strings whose presence anywhere in a 2xx body means a
	// block page.
	Markers []string
	// TitleMarkers: case-insensitive strings looked for only in <title>.
	TitleMarkers []string
	// Selectors: CSS selectors of which at least one must match an HTML body.
	Selectors []string
	// JSONPaths: dotted paths ("data.products", "products[].id") of which
	// at least one must be present in a JSON body. "[]" walks an array,
	// "key*" every member whose name starts with key, and "@fromstr"
	// goes on inside a JSON string's document
	// ("widgetStates.tileGridDesktop-*.@fromstr.items").
	JSONPaths []string
	// EmptyJSONPaths: JSON paths whose presence is the site's own "nothing
	// found" answer (Ozon's searchResultsError widget). A JSON body with
	// none of JSONPaths present and one of these is an empty list, judged
	// as one (EmptyListBlocked, EmptyListNotFound). Used with JSONPaths.
	EmptyJSONPaths []string
	// EmptyListBlocked: the rule expects items: a JSON path that is
	// present but an empty list (e.g. WB "products": []) is Suspect, a
	// soft ban as often as "no results" (on a later page: as often as the
	// end of the list). Alone (Confirm 0) it is Blocked on page 1.
	EmptyListBlocked bool
	// EmptyListNotFound: a present but empty list is NotFound (e.g. a
	// product detail answer for an id that does not exist).
	EmptyListNotFound bool
	// UnknownJSONSuspect: a JSON body with none of JSONPaths and
	// EmptyJSONPaths (an unknown JSON: a schema change or a wall never
	// seen) is Suspect, not Blocked: no evidence of a ban by itself (I7).
	// A second proxy that has the items shows a soft ban; one that agrees
	// hands the answer to the parser, which fails the job on a shape it
	// does not know (never an empty result). Alone (Confirm 0): Blocked.
	UnknownJSONSuspect bool
	// PageSize is how many items a full listing page holds (Wildberries'
	// search API: 100). With it, an empty list on page N > 1 whose answer
	// gives a total above 0 that the N−1 pages before hold (total at
	// most (N−1) × PageSize) is past the end the site itself described:
	// OK, not Suspect. 0: the answer's total is not read.
	PageSize int
	// MinSize: a 2xx body shorter than this many bytes is Blocked.
	MinSize int
	// DropFraction: after BaselineSamples OK bodies, a body smaller than
	// DropFraction times the running mean (EWMA) of OK body sizes of the
	// same site, kind and format is Blocked as a placeholder. 0 disables.
	DropFraction float64
	// BaselineSamples is how many OK bodies the baseline needs first.
	BaselineSamples int
	// Confirm is how many second opinions a Suspect answer gets: 1 (nil
	// means 1) asks once more from a second proxy before anyone is
	// punished; 0 acts on the answer alone (an empty list on page 1, a
	// missing selector and a size drop are Blocked, an empty product list
	// NotFound).
	Confirm *int
}

// Confirms says whether a Suspect answer is confirmed from a second proxy
// (Confirm unset or 1).
func (r Rule) Confirms() bool { return r.Confirm == nil || *r.Confirm != 0 }

// Merge lays over on top of r: lists are joined without duplicates, and
// over's non-zero scalars win. If over.Replace is set, the result is over.
func (r Rule) Merge(over Rule) Rule {
	if over.Replace {
		return over.clone()
	}
	out := r.clone()
	out.BlockStatus = union(out.BlockStatus, over.BlockStatus)
	out.RateLimitStatus = union(out.RateLimitStatus, over.RateLimitStatus)
	out.DefectStatus = union(out.DefectStatus, over.DefectStatus)
	out.ChallengeStatus = union(out.ChallengeStatus, over.ChallengeStatus)
	out.ChallengeMarkers = union(out.ChallengeMarkers, over.ChallengeMarkers)
	out.ChallengeFirstMarkers = union(out.ChallengeFirstMarkers, over.ChallengeFirstMarkers)
	out.URLPatterns = union(out.URLPatterns, over.URLPatterns)
	out.Markers = union(out.Markers, over.Markers)
	out.TitleMarkers = union(out.TitleMarkers, over.TitleMarkers)
	out.Selectors = union(out.Selectors, over.Selectors)
	out.JSONPaths = union(out.JSONPaths, over.JSONPaths)
	out.EmptyJSONPaths = union(out.EmptyJSONPaths, over.EmptyJSONPaths)
	out.mergeScalars(over)
	return out
}

// mergeScalars copies over's non-zero scalars into r.
func (r *Rule) mergeScalars(over Rule) {
	r.EmptyListBlocked = r.EmptyListBlocked || over.EmptyListBlocked
	r.EmptyListNotFound = r.EmptyListNotFound || over.EmptyListNotFound
	r.UnknownJSONSuspect = r.UnknownJSONSuspect || over.UnknownJSONSuspect
	if over.MinSize != 0 {
		r.MinSize = over.MinSize
	}
	if over.DropFraction != 0 {
		r.DropFraction = over.DropFraction
	}
	if over.BaselineSamples != 0 {
		r.BaselineSamples = over.BaselineSamples
	}
	if over.PageSize != 0 {
		r.PageSize = over.PageSize
	}
	if over.Confirm != nil {
		n := *over.Confirm
		r.Confirm = &n
	}
}

// clone copies r so merged rules never share list backing arrays.
func (r Rule) clone() Rule {
	r.BlockStatus = slices.Clone(r.BlockStatus)
	r.RateLimitStatus = slices.Clone(r.RateLimitStatus)
	r.DefectStatus = slices.Clone(r.DefectStatus)
	r.ChallengeStatus = slices.Clone(r.ChallengeStatus)
	r.ChallengeMarkers = slices.Clone(r.ChallengeMarkers)
	r.ChallengeFirstMarkers = slices.Clone(r.ChallengeFirstMarkers)
	r.URLPatterns = slices.Clone(r.URLPatterns)
	r.Markers = slices.Clone(r.Markers)
	r.TitleMarkers = slices.Clone(r.TitleMarkers)
	r.Selectors = slices.Clone(r.Selectors)
	r.JSONPaths = slices.Clone(r.JSONPaths)
	r.EmptyJSONPaths = slices.Clone(r.EmptyJSONPaths)
	if r.Confirm != nil {
		n := *r.Confirm
		r.Confirm = &n
	}
	return r
}

// union appends the items of b missing from a.
func union[T comparable](a, b []T) []T {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// Merge lays over on top of rs, place by place (default, site default,
// site kind), and returns the result; rs is not changed.
func (rs Rules) Merge(over Rules) Rules {
	out := Rules{Default: rs.Default.Merge(over.Default), Sites: map[string]Site{}}
	for name, s := range rs.Sites {
		out.Sites[name] = s.merge(Site{})
	}
	for name, s := range over.Sites {
		out.Sites[name] = out.Sites[name].merge(s)
	}
	return out
}

// merge lays over on top of s.
func (s Site) merge(over Site) Site {
	out := Site{Default: s.Default.Merge(over.Default), Kinds: map[string]Rule{}}
	for k, r := range s.Kinds {
		out.Kinds[k] = Rule{}.Merge(r)
	}
	for k, r := range over.Kinds {
		out.Kinds[NormalizeKind(k)] = out.Kinds[NormalizeKind(k)].Merge(r)
	}
	return out
}

// With returns a copy of rs with r laid over the rule of (site, kind);
// kind "default" or "" means the site's default. Use it to add a generic
// site's expected selectors.
func (rs Rules) With(site, kind string, r Rule) Rules {
	s := Site{Kinds: map[string]Rule{}}
	if kind == "" || kind == "default" {
		s.Default = r
	} else {
		s.Kinds[kind] = r
	}
	return rs.Merge(Rules{Sites: map[string]Site{site: s}})
}

// Effective is the rule a Detector applies to (site, kind): the layers
// merged. An unknown site gets Default; an unknown kind the site's default.
func (rs Rules) Effective(site, kind string) Rule {
	s, ok := rs.Sites[site]
	if !ok {
		return Rule{}.Merge(rs.Default)
	}
	r := rs.Default.Merge(s.Default)
	if k, ok := s.Kinds[NormalizeKind(kind)]; ok {
		r = r.Merge(k)
	}
	return r
}

// NormalizeKind maps kind aliases to one name: "item" is "product", ""
// is "default".
func NormalizeKind(kind string) string {
	switch kind {
	case "item":
		return "product"
	case "":
		return "default"
	}
	return kind
}

// Validate checks every regexp, selector, JSON path and number, and names
// the rule of the first bad one: "sites.avito.kinds.search.selectors[0]".
func (rs Rules) Validate() error {
	if err := rs.Default.validate("default"); err != nil {
		return err
	}
	for _, name := range sortedKeys(rs.Sites) {
		if err := rs.Sites[name].validate("sites." + name); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one site's rules; at names the site.
func (s Site) validate(at string) error {
	if err := s.Default.validate(at + ".default"); err != nil {
		return err
	}
	for _, k := range sortedKeys(s.Kinds) {
		if err := s.Kinds[k].validate(at + ".kinds." + k); err != nil {
			return err
		}
	}
	return nil
}

// validate checks one rule; at names it.
func (r Rule) validate(at string) error {
	checks := []struct {
		field string
		items []string
		check func(string) error
	}{
		{"url_patterns", r.URLPatterns, checkPattern},
		{"selectors", r.Selectors, checkSelector},
		{"json_paths", r.JSONPaths, checkJSONPath},
		{"empty_json_paths", r.EmptyJSONPaths, checkJSONPath},
		{"markers", r.Markers, checkMarker},
		{"challenge_markers", r.ChallengeMarkers, checkMarker},
		{"challenge_first_markers", r.ChallengeFirstMarkers, checkMarker},
		{"title_markers", r.TitleMarkers, checkMarker},
	}
	for _, c := range checks {
		for i, s := range c.items {
			if err := c.check(s); err != nil {
				return fmt.Errorf("%s.%s[%d]: %w", at, c.field, i, err)
			}
		}
	}
	return r.validateNumbers(at)
}

// validateNumbers checks statuses and the size knobs.
func (r Rule) validateNumbers(at string) error {
	for i, st := range r.BlockStatus {
		if err := checkStatus(st); err != nil {
			return fmt.Errorf("%s.block_status[%d]: %w", at, i, err)
		}
	}
	for i, st := range r.RateLimitStatus {
		if err := checkStatus(st); err != nil {
			return fmt.Errorf("%s.rate_limit_status[%d]: %w", at, i, err)
		}
	}
	for i, st := range r.DefectStatus {
		if err := checkStatus(st); err != nil {
			return fmt.Errorf("%s.defect_status[%d]: %w", at, i, err)
		}
	}
	for i, st := range r.ChallengeStatus {
		if err := checkStatus(st); err != nil {
			return fmt.Errorf("%s.challenge_status[%d]: %w", at, i, err)
		}
	}
	if r.MinSize < 0 || r.BaselineSamples < 0 || r.PageSize < 0 {
		return fmt.Errorf("%s: min_size, baseline_samples and page_size must not be negative", at)
	}
	if r.DropFraction < 0 || r.DropFraction >= 1 {
		return fmt.Errorf("%s.drop_fraction: %v is not in [0, 1)", at, r.DropFraction)
	}
	if r.Confirm != nil && *r.Confirm != 0 && *r.Confirm != 1 {
		return fmt.Errorf("%s.confirm: %d is not 0 or 1", at, *r.Confirm)
	}
	return nil
}

// sortedKeys returns m's keys in order, for stable error messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}
