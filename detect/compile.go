package detect

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
)

// compiled is an effective Rule ready to run: regexps, selectors and JSON
// paths parsed once.
type compiled struct {
	rule         Rule
	urls         []*regexp.Regexp
	markers      [][]byte
	challenges   [][]byte
	first        [][]byte // ChallengeFirstMarkers
	titleMarkers []string // lower-cased
	selectors    []selector
	paths        []jsonPath
	emptyPaths   []jsonPath
}

// selector is a compiled CSS selector and its source text.
type selector struct {
	src string
	sel cascadia.Selector
}

// compile prepares r; r must be valid (see Rules.Validate).
func compile(r Rule) (*compiled, error) {
	c := &compiled{rule: r}
	for _, p := range r.URLPatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("url pattern %q: %w", p, err)
		}
		c.urls = append(c.urls, re)
	}
	for _, m := range r.Markers {
		c.markers = append(c.markers, []byte(m))
	}
	for _, m := range r.ChallengeMarkers {
		c.challenges = append(c.challenges, []byte(m))
	}
	for _, m := range r.ChallengeFirstMarkers {
		c.first = append(c.first, []byte(m))
	}
	for _, m := range r.TitleMarkers {
		c.titleMarkers = append(c.titleMarkers, strings.ToLower(m))
	}
	return c, c.compileExpected(r)
}

// compileExpected compiles the selectors and JSON paths.
func (c *compiled) compileExpected(r Rule) error {
	for _, s := range r.Selectors {
		sel, err := cascadia.Compile(s)
		if err != nil {
			return fmt.Errorf("selector %q: %w", s, err)
		}
		c.selectors = append(c.selectors, selector{src: s, sel: sel})
	}
	var err error
	if c.paths, err = parseJSONPaths(r.JSONPaths); err != nil {
		return err
	}
	c.emptyPaths, err = parseJSONPaths(r.EmptyJSONPaths)
	return err
}

// parseJSONPaths parses each of srcs.
func parseJSONPaths(srcs []string) ([]jsonPath, error) {
	var out []jsonPath
	for _, p := range srcs {
		jp, err := parseJSONPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, jp)
	}
	return out, nil
}

// blockStatus and rateStatus tell whether a status is in the rule's lists.
func (c *compiled) blockStatus(st int) bool { return slices.Contains(c.rule.BlockStatus, st) }
func (c *compiled) rateStatus(st int) bool  { return slices.Contains(c.rule.RateLimitStatus, st) }

// defectStatus tells whether a status is in the rule's defect_status.
func (c *compiled) defectStatus(st int) bool { return slices.Contains(c.rule.DefectStatus, st) }

// challenge says whether r is a JavaScript challenge: a challenge status,
// or a challenge marker in its body.
func (c *compiled) challenge(r *Response) (Verdict, bool) {
	if slices.Contains(c.rule.ChallengeStatus, r.Status) {
		return Verdict{Kind: Challenge, Reason: "js challenge", Rule: fmt.Sprintf("status %d", r.Status), Status: r.Status}, true
	}
	for _, m := range c.challenges {
		if bytes.Contains(r.Body, m) {
			return Verdict{Kind: Challenge, Reason: "js challenge", Rule: fmt.Sprintf("challenge marker %q", m), Status: r.Status}, true
		}
	}
	for _, m := range c.first {
		if bytes.Contains(r.Body, m) {
			return Verdict{Kind: Challenge, Reason: "challenge or block page", Rule: fmt.Sprintf("challenge-first marker %q", m),
				Status: r.Status, IfUnsolved: Blocked}, true
		}
	}
	return Verdict{}, false
}

// checkPattern validates a URL pattern.
func checkPattern(p string) error {
	if _, err := regexp.Compile(p); err != nil {
		return fmt.Errorf("invalid regexp %q: %w", p, err)
	}
	return nil
}

// checkSelector validates a CSS selector.
func checkSelector(s string) error {
	if _, err := cascadia.Compile(s); err != nil {
		return fmt.Errorf("invalid selector %q: %w", s, err)
	}
	return nil
}

// checkJSONPath validates a JSON path.
func checkJSONPath(p string) error {
	_, err := parseJSONPath(p)
	return err
}

// checkMarker rejects an empty marker, which would match every body.
func checkMarker(m string) error {
	if strings.TrimSpace(m) == "" {
		return errors.New("empty marker matches every page")
	}
	return nil
}

// checkStatus accepts an HTTP status code.
func checkStatus(st int) error {
	if st < 100 || st > 599 {
		return fmt.Errorf("%d is not an HTTP status", st)
	}
	return nil
}
